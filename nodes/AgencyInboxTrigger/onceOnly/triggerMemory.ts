/**
 * What one process keeps for one trigger node at its Production URL, and how n8n's answers change it.
 * A cache of what n8n's database holds (the node's static data and the deduplication store's row),
 * never its only copy, except for `running`: the deliveries this process accepted whose answer it waits
 * for (a re-delivery of one meanwhile is answered 409 here; another process decides it from the store).
 */
import { randomBytes } from 'node:crypto';

import type { IExecuteFunctions, IWebhookFunctions } from 'n8n-workflow';

import { nodeOwnerOf, processStore } from '../../shared/processMemory';
import { DELIVERY_MEMORY_MS, DeliveryLog, MAX_REMEMBERED_DELIVERIES } from '../deliveryLog';
import { Leases } from './deliveryLease';
import type { RunsAgain } from './runsAgain';
import { openEntry } from './storeEntries';
import { type DeliveryStore, StoreLine } from './storeLine';

/** Static data key of the ids whose runs ended (0.1.0 kept a plain list of accepted ids under the same key). */
export const MEMORY_KEY = 'acceptedDeliveries';
const HOUR_MS = 60 * 60 * 1000;
/**
 * How long an id counts as running when n8n has not answered it: as long as the service retries
 * (17.6 h). A run still going then is not known any more, and a re-delivery of it would run again.
 */
export const RUNNING_BELIEF_MS = DELIVERY_MEMORY_MS;
/** Past this many running ids, those older than RUNNING_BELIEF_MS are looked for and let go. */
const MAX_RUNNING_KEPT = 10_000;

/** Tells this process's acceptances from those of other processes (and of this one before a restart). */
export const PROCESS_TOKEN = randomBytes(9).toString('base64url');

export interface TriggerState {
	/** Ids whose runs ended: what webhook() answers "already run" and every run saves. */
	finished: DeliveryLog;
	/** Ids accepted here whose answer n8n has not sent: accepted at (ms). */
	running: Map<string, number>;
	/**
	 * Of those, the ids whose run's trigger step ran in this process: any answer then means the run
	 * ended. Each has an open entry in n8n's deduplication store when n8n has one (`store`).
	 */
	ranHere: Set<string>;
	/** The store of the latest run here, to remove those open entries (it outlives the run that handed it out). */
	store?: DeliveryStore;
	/** This process's calls to the node's row in the store. */
	storeLine: StoreLine;
	/** The deliveries whose runs this process claimed in queue mode, and their renewals. */
	leases: Leases;
	/** Ids whose claim runs in this process now: a second run of one stops at once. */
	claiming: Set<string>;
	/** Ids whose run started here, only where n8n has no deduplication store. */
	startedWithoutStore?: DeliveryLog;
	/** This process runs the deliveries it accepts (default setup): their runs need no carried ids. */
	runsOwnDeliveries: boolean;
	/** The hour of the last warning about forgotten ids. */
	warnedHour: number;
	/** Deliveries run again here after a cut run, and by which execution (runsAgain.ts). */
	runsAgain: RunsAgain;
}

const triggers = processStore<TriggerState>({
	name: 'accepted delivery ids and claims',
	belongsTo: 'a webhook trigger node at its Production URL',
	lifetime: 'released at deactivation once no run of it goes on here; else 19 hours after its last use (its ids are kept 18 hours)',
	keptMs: DELIVERY_MEMORY_MS + HOUR_MS,
	renewedOnUse: true,
	maxEntries: 10_000,
	inUse: (state) => state.running.size > 0 || state.claiming.size > 0 || state.storeLine.busy || state.leases.busy,
});

/** Once-only delivery is for the Production URL, whatever mode a run of it has (a Retry's included). */
export function stateOf(context: IWebhookFunctions | IExecuteFunctions): TriggerState {
	const owner = { ...nodeOwnerOf(context), url: 'production' } as const;
	return triggers.obtain(owner, () => {
		const storeLine = new StoreLine();
		const state: TriggerState = {
			finished: new DeliveryLog(),
			running: new Map(),
			ranHere: new Set(),
			storeLine,
			leases: new Leases(storeLine, () => triggers.get(owner) === state),
			claiming: new Set(),
			runsOwnDeliveries: false,
			warnedHour: -1,
			runsAgain: new Map(),
		};
		return state;
	});
}

/**
 * n8n answered an accepted delivery. Any answer ends a run whose trigger step ran here (the default
 * setup). A 200 ends a run on a worker; an error there means a failed run (its end saved the static
 * data), a run n8n could not start, or a killed worker: the static data and the store tell which.
 */
export function answerEnded(state: TriggerState, deliveryId: string, status: number, nowMs: number): void {
	state.running.delete(deliveryId);
	const ranHere = state.ranHere.delete(deliveryId);
	if (!ranHere && (status < 200 || status >= 300)) return;
	state.finished.add(deliveryId, nowMs);
	if (ranHere && state.store) state.storeLine.remove(state.store, [openEntry(deliveryId)]);
}

/** Whether a run of the delivery accepted here goes on; ids n8n never answered are let go after RUNNING_BELIEF_MS. */
export function isRunningHere(state: TriggerState, deliveryId: string, nowMs: number): boolean {
	const acceptedAt = state.running.get(deliveryId);
	return acceptedAt !== undefined && acceptedAt > nowMs - RUNNING_BELIEF_MS;
}

/** Marks an accepted delivery as running here, letting go of those n8n never answered when there are many. */
export function startRunning(state: TriggerState, deliveryId: string, nowMs: number): void {
	if (state.running.size >= MAX_RUNNING_KEPT) {
		for (const [id, acceptedAt] of state.running) {
			if (acceptedAt > nowMs - RUNNING_BELIEF_MS) continue;
			state.running.delete(id);
			state.ranHere.delete(id);
		}
	}
	state.running.set(deliveryId, nowMs);
}

/** Until when the memory is incomplete (ids forgotten early), with a warning in n8n's log once an hour; 0 when it is not. */
export function incompleteUntil(context: IWebhookFunctions | IExecuteFunctions, state: TriggerState, nowMs: number): number {
	if (state.finished.incompleteUntil <= nowMs) return 0;
	const hour = Math.floor(nowMs / HOUR_MS);
	if (state.warnedHour !== hour) {
		state.warnedHour = hour;
		context.logger.warn(forgottenIdsNotice(state.finished.incompleteUntil));
	}
	return state.finished.incompleteUntil;
}

export function forgottenIdsNotice(incompleteUntil: number): string {
	return `Agency Inbox Trigger: more than ${MAX_REMEMBERED_DELIVERIES.toLocaleString('en-US')} deliveries within 19 hours, so the oldest delivery ids were forgotten early. Until ${new Date(incompleteUntil).toISOString()} a re-delivery of one of them starts a second run.`;
}
