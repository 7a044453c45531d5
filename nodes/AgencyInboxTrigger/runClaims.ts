import { randomBytes } from 'node:crypto';

import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError, sleep } from 'n8n-workflow';

import type { DeliveryLog } from './deliveryLog';
import { isStored } from './deliveryLog';

/**
 * Which deliveries a run may run, decided once per delivery across every n8n process of an instance.
 *
 * Where n8n offers it (its deduplication store, the one the Remove Duplicates node uses: one database
 * row per workflow and node, shared by the main, the workers and the webhook processes), a run records
 * its delivery id there at its start. n8n updates that row by reading it and writing it back without a
 * lock, so two runs that record at the same moment can overwrite each other. Runs in one process take
 * turns at the store. Across processes each run also records a token of its own and reads the row back
 * after a second (claimTiming): its token still there means the delivery is its own; the id there
 * without its token means another run of the same delivery wrote last and owns it; neither means a run
 * of another delivery overwrote both, and reading back has recorded them again.
 *
 * Where n8n has no such store (older versions), the ids of started runs travel in static data, which
 * holds only runs that started: the ids that webhook() accepted are kept apart (deliveryLog), since a
 * run's static data, read from the database when the run starts, may already hold ids of deliveries
 * accepted in a burst whose runs have not started yet.
 */

/** settleMs: long enough for any write that read the row before ours to have landed (tests shorten it). */
export const claimTiming = { settleMs: 1_000 };
const CLAIM_ATTEMPTS = 8;
/** Two entries per delivery (its id and its run's token): the last 5,000 deliveries' runs. */
const MAX_CLAIM_ENTRIES = 10_000;
const STORE_OPTIONS = { mode: 'entries', maxEntries: MAX_CLAIM_ENTRIES } as const;

/** Static data key of the started runs where n8n has no deduplication store. */
const STARTED_RUNS_KEY = 'startedRuns';

function hasSharedStore(context: IExecuteFunctions): boolean {
	return typeof context.helpers?.checkProcessedAndRecord === 'function';
}

/** The store calls of this process per trigger node, one after the other, so they never overwrite each other. */
const storeTurns = new Map<string, Promise<unknown>>();

async function inTurn<T>(trigger: string, call: () => Promise<T>): Promise<T> {
	const previous = storeTurns.get(trigger) ?? Promise.resolve();
	const turn = previous.then(call, call);
	storeTurns.set(trigger, turn.catch(() => undefined));
	return await turn;
}

async function claimInSharedStore(context: IExecuteFunctions, trigger: string, deliveryIds: string[]): Promise<Set<string>> {
	const nonce = randomBytes(9).toString('base64url');
	const tokenOf = (deliveryId: string) => `${deliveryId} run ${nonce}`;
	const record = async (ids: string[]) => {
		const entries = ids.flatMap((deliveryId) => [deliveryId, tokenOf(deliveryId)]);
		const recorded = await inTurn(trigger, async () => await context.helpers.checkProcessedAndRecord(entries, 'node', STORE_OPTIONS));
		return new Set(recorded.processed.map(String));
	};
	const owned = new Set<string>();
	let alreadyProcessed: Set<string> | undefined;
	for (let attempt = 0; attempt < CLAIM_ATTEMPTS && alreadyProcessed === undefined; attempt++) {
		// n8n's first write of the row is an insert: two runs inserting at once make one of them fail.
		alreadyProcessed = await record(deliveryIds).catch(() => undefined);
	}
	if (alreadyProcessed === undefined) throw couldNotRecord(context, deliveryIds);
	let pending = deliveryIds.filter((deliveryId) => !alreadyProcessed.has(deliveryId));
	for (let attempt = 0; attempt < CLAIM_ATTEMPTS && pending.length > 0; attempt++) {
		// A little jitter, so that runs of two processes that overwrote each other do not meet again.
		await sleep(claimTiming.settleMs * (1 + Math.random() / 2));
		const processed = await record(pending);
		for (const deliveryId of pending) if (processed.has(tokenOf(deliveryId))) owned.add(deliveryId);
		pending = pending.filter((deliveryId) => !owned.has(deliveryId) && !processed.has(deliveryId));
	}
	if (pending.length > 0) throw couldNotRecord(context, pending);
	return owned;
}

function couldNotRecord(context: IExecuteFunctions, deliveryIds: string[]): NodeOperationError {
	return new NodeOperationError(
		context.getNode(),
		`Could not record the start of the run for delivery ${deliveryIds.join(', ')} in n8n's database, so the workflow did not go on (to never run one delivery twice)`,
		{ description: 'Check that n8n can write to its database. The service re-delivers the event only if it did not receive our 200; look the event up in the service before acting on it by hand.' },
	);
}

function claimInStaticData(staticData: IDataObject, runs: DeliveryLog, deliveryIds: string[], nowMs: number): Set<string> {
	const stored = staticData[STARTED_RUNS_KEY];
	const owned = new Set(deliveryIds.filter((deliveryId) => !isStored(stored, deliveryId)));
	runs.absorb(stored, nowMs);
	staticData[STARTED_RUNS_KEY] = runs.buckets;
	return owned;
}

/**
 * The deliveries among `deliveryIds` (none of them started in this process before) whose run this run
 * is: the others already started elsewhere, or start elsewhere at the same moment. `trigger` names the
 * trigger node in this process (workflow id and node id).
 */
export async function claimRuns(
	context: IExecuteFunctions,
	trigger: string,
	staticData: IDataObject,
	runs: DeliveryLog,
	deliveryIds: string[],
	nowMs: number,
): Promise<Set<string>> {
	if (deliveryIds.length === 0) return new Set();
	return hasSharedStore(context)
		? await claimInSharedStore(context, trigger, deliveryIds)
		: claimInStaticData(staticData, runs, deliveryIds, nowMs);
}
