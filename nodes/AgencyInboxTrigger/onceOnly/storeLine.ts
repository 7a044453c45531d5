/**
 * The calls one process makes to a trigger node's row in n8n's deduplication store. n8n reads the row
 * and writes it back whole, without a lock, so two calls of one process at once could overwrite each
 * other: a process sends its calls one batch at a time (records, then removals), and the runs of a
 * burst share calls. A call is tried STORE_ATTEMPTS times.
 */
import type { IExecuteFunctions } from 'n8n-workflow';

/** Long enough for any write that read the row before ours to have landed (tests shorten it). */
export const storeTiming = { settleMs: 1_000 };

const STORE_ATTEMPTS = 8;
/** The row's cap in entries: two per delivery run (a row of about 53 KB). */
export const STORE_ENTRIES = 2_000;
const STORE_OPTIONS = { mode: 'entries', maxEntries: STORE_ENTRIES } as const;

/** n8n's deduplication store as a run's context hands it out: all of one trigger node's calls go to its row. */
export interface DeliveryStore {
	checkProcessedAndRecord: IExecuteFunctions['helpers']['checkProcessedAndRecord'];
	removeProcessed: IExecuteFunctions['helpers']['removeProcessed'];
	warn: (message: string) => void;
}

/** The store of a run's context; undefined where n8n has none (older n8n, such as 1.49.0). */
export function storeOf(context: IExecuteFunctions): DeliveryStore | undefined {
	const helpers = context.helpers;
	if (typeof helpers?.checkProcessedAndRecord !== 'function' || typeof helpers.removeProcessed !== 'function') return undefined;
	return {
		checkProcessedAndRecord: helpers.checkProcessedAndRecord.bind(helpers),
		removeProcessed: helpers.removeProcessed.bind(helpers),
		warn: (message) => context.logger.warn(message),
	};
}

interface PendingCall {
	store: DeliveryStore;
	entries: string[];
	/** Removes the entries instead of recording them. */
	remove: boolean;
	resolve: (processed: Set<string>) => void;
	reject: (error: unknown) => void;
}

/** One process's line of calls to one trigger node's row. */
export class StoreLine {
	private pending: PendingCall[] = [];

	private calling = false;

	/** Whether calls wait or go on: the line's owner keeps it until they are done. */
	get busy(): boolean {
		return this.calling || this.pending.length > 0;
	}

	/** Records entries and answers those that were there already; rejects when every attempt failed. */
	record(store: DeliveryStore, entries: string[]): Promise<Set<string>> {
		return this.call(store, entries, false);
	}

	/**
	 * Removes entries. Failing, they stay, and n8n's log says so: a re-delivery that neither the memory
	 * nor the static data knows then runs again.
	 */
	remove(store: DeliveryStore, entries: string[]): void {
		this.call(store, entries, true).catch(() => store.warn(`Agency Inbox Trigger: could not mark the end of the runs of ${entries.length} deliveries in n8n's database; a re-delivery of one that n8n's memory lost runs again.`));
	}

	private call(store: DeliveryStore, entries: string[], remove: boolean): Promise<Set<string>> {
		const answer = new Promise<Set<string>>((resolve, reject) => this.pending.push({ store, entries, remove, resolve, reject }));
		if (!this.calling) void this.callInBatches();
		return answer;
	}

	private async callInBatches(): Promise<void> {
		this.calling = true;
		try {
			while (this.pending.length > 0) {
				const batch = this.pending.splice(0);
				await callBatch(batch.filter((call) => !call.remove), async (store, entries) => new Set((await store.checkProcessedAndRecord(entries, 'node', STORE_OPTIONS)).processed.map(String)));
				await callBatch(batch.filter((call) => call.remove), async (store, entries) => {
					await store.removeProcessed(entries, 'node', STORE_OPTIONS);
					return new Set<string>();
				});
			}
		} finally {
			this.calling = false;
		}
	}
}

/** One call for the calls of a batch. Any call's store will do: all name the same workflow and node, so the same row. */
async function callBatch(calls: PendingCall[], call: (store: DeliveryStore, entries: string[]) => Promise<Set<string>>): Promise<void> {
	if (calls.length === 0) return;
	const entries = [...new Set(calls.flatMap((pending) => pending.entries))];
	let processed: Set<string> | undefined;
	let failure: unknown;
	for (let attempt = 0; attempt < STORE_ATTEMPTS && !processed; attempt++) {
		try {
			processed = await call(calls[0].store, entries);
		} catch (error) {
			failure = error;
		}
	}
	for (const pending of calls) {
		if (processed) pending.resolve(processed);
		else pending.reject(failure);
	}
}
