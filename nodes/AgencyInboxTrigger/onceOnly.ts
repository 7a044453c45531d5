/**
 * Once-only delivery: each delivery the Agency Inbox Trigger accepts starts one run that goes on past
 * the trigger, however often the service re-delivers it and however many n8n processes serve it.
 * The trigger calls `acceptDelivery` in webhook(), `claimRuns` in execute() (the first step of the
 * run a delivery starts) and `releaseTrigger` when its workflow is deactivated.
 *
 * 1. Accept, in webhook() (`IWebhookFunctions.getWorkflowStaticData('node')`, which n8n reads from
 *    its database for every request). An id this process accepted, or read in the node's static data,
 *    in the last 18 hours (the service's retries span 17.6 h) is answered "already accepted": no run.
 *    Any other id is remembered in this process at once, with no await between the check and the add,
 *    so overlapping re-deliveries cannot both pass, and its run starts with a note: which process
 *    accepted it, when, and (for queue mode) the ids this process accepted recently. n8n saves static
 *    data after runs only, not after webhook(), so the memory reaches the database through the run.
 * 2. Claim, in execute() (`IExecuteFunctions.helpers.checkProcessedAndRecord`: n8n's deduplication
 *    store, one database row per workflow and node shared by every process of the instance; n8n reads
 *    the row and writes it back whole, without a lock, so concurrent writers can overwrite each other).
 *    - A run in the process that accepted its delivery (n8n's default setup: there one process serves
 *      webhooks and runs executions) records the id; "already processed" means a run before a restart
 *      had it. No other process writes the row and this process's calls take turns, so nothing can
 *      overwrite the record: one call, no read-back.
 *    - A run in another process (queue mode: a worker; or the process restarted since it accepted)
 *      records the id and a token of its own, waits `settleMs` (any write that read the row before
 *      ours has landed by then) and records the token again: the token already there means the
 *      delivery is this run's; the id there without the token means another run of the same delivery
 *      wrote last and owns it; neither means another delivery's run overwrote both, and recording
 *      again has put them back. That costs `settleMs` (1 to 1.5 s) per run.
 *    A process sends its calls to the row one batch at a time, so a burst's runs share calls. The row
 *    keeps the last STORE_ENTRIES entries (one per delivery, two in queue mode), so a call costs the
 *    same whether the row is empty or full.
 * 3. Remember, in execute() (`getWorkflowStaticData('node')`, saved by n8n when the run ends): the
 *    process's memory of ids goes into the node's static data, so after a restart webhook() knows them.
 *
 * Outcomes: webhook() answers "accepted" (a run starts) or "already accepted" (none). A run goes on
 * past the trigger with its item, or stops there with no item: its delivery ran before or runs in
 * another run. Failure: a call to the store is tried STORE_ATTEMPTS times (n8n's first write of a row
 * is an insert, and two at once make one fail), then the run fails with an error and does not go on,
 * so a delivery never runs unrecorded; the service does not re-deliver it (it had its 200).
 *
 * The weaker guarantee where n8n has no deduplication store (older n8n, such as 1.49.0 of the
 * compatibility ladder): the claim is made in this process only. One run per delivery in n8n's default
 * setup, and after a restart for deliveries whose run ended before it; in queue mode a delivery
 * accepted by two webhook processes, or re-delivered to one before the first run ended, can run twice.
 *
 * Beyond the memory's cap (120,000 ids within 19 hours) the oldest ids are forgotten early: a
 * re-delivery of one would start a second run, so every run accepted meanwhile carries an execution
 * hint and n8n's log gets a warning once an hour.
 */
import { randomBytes } from 'node:crypto';

import type { IDataObject, IExecuteFunctions, IHookFunctions, INodeExecutionData, IWebhookFunctions } from 'n8n-workflow';
import { NodeOperationError, sleep } from 'n8n-workflow';

import { setRunOrder } from '../shared/runOrder';
import type { Delivery } from './delivery';
import { DeliveryLog, MAX_REMEMBERED_DELIVERIES, type StoredDeliveries } from './deliveryLog';

/** settleMs: long enough for any write that read the row before ours to have landed (tests shorten it). */
export const onceOnlyTiming = { settleMs: 1_000 };

const STORE_ATTEMPTS = 8;
/** The store row's cap in entries: one per delivery, two in queue mode (a row of about 53 KB). */
export const STORE_ENTRIES = 2_000;
const STORE_OPTIONS = { mode: 'entries', maxEntries: STORE_ENTRIES } as const;

/** Static data key of the remembered ids (0.1.0 kept a plain list under the same key). */
const MEMORY_KEY = 'acceptedDeliveries';
/** The item field that carries the acceptance note from webhook() to the run; removed in execute(). */
const NOTE_FIELD = 'agencyInboxAcceptance';
const HOUR_MS = 60 * 60 * 1000;

/** Tells this process's acceptances from those of other processes (and of this one before a restart). */
const PROCESS_TOKEN = randomBytes(9).toString('base64url');

interface AcceptanceNote {
	/** The PROCESS_TOKEN of the process that accepted the delivery. */
	by: string;
	/** When it was accepted (ms): the run's place in the request budget's queue. */
	at: number;
	/** The ids the accepting process accepted recently, for the save of a run in another process. */
	recent?: StoredDeliveries;
	/** Set when the accepting process had forgotten ids early (beyond the cap): until when. */
	incompleteUntil?: number;
}

interface PendingCall {
	context: IExecuteFunctions;
	entries: string[];
	resolve: (processed: Set<string>) => void;
	reject: (error: unknown) => void;
}

/** What one process keeps for one trigger node (its workflow id and node id). */
interface TriggerState {
	/** Ids accepted here or read in static data: what webhook() checks and execute() saves. */
	memory: DeliveryLog;
	/** Ids whose claim runs in this process now: a second run of one stops at once. */
	claiming: Set<string>;
	/** Ids whose run started here, only where n8n has no deduplication store. */
	startedWithoutStore?: DeliveryLog;
	/** Calls waiting for the next batch to the store row, and whether a batch is under way. */
	pendingCalls: PendingCall[];
	calling: boolean;
	/** This process runs the deliveries it accepts (default setup): their runs need no carried ids. */
	runsOwnDeliveries: boolean;
	/** The hour of the last warning about forgotten ids. */
	warnedHour: number;
}

const triggers = new Map<string, TriggerState>();

function triggerKey(context: IWebhookFunctions | IExecuteFunctions | IHookFunctions): string {
	return `${context.getWorkflow().id}/${context.getNode().id}`;
}

function stateOf(context: IWebhookFunctions | IExecuteFunctions): TriggerState {
	const key = triggerKey(context);
	let state = triggers.get(key);
	if (!state) {
		state = { memory: new DeliveryLog(), claiming: new Set(), pendingCalls: [], calling: false, runsOwnDeliveries: false, warnedHour: -1 };
		triggers.set(key, state);
	}
	return state;
}

/** Until when the memory is incomplete (ids forgotten early), with a warning in n8n's log once an hour; 0 when it is not. */
function incompleteUntil(context: IWebhookFunctions | IExecuteFunctions, state: TriggerState, nowMs: number): number {
	if (state.memory.incompleteUntil <= nowMs) return 0;
	const hour = Math.floor(nowMs / HOUR_MS);
	if (state.warnedHour !== hour) {
		state.warnedHour = hour;
		context.logger.warn(forgottenIdsNotice(state.memory.incompleteUntil));
	}
	return state.memory.incompleteUntil;
}

function forgottenIdsNotice(incompleteUntil: number): string {
	return `Agency Inbox Trigger: more than ${MAX_REMEMBERED_DELIVERIES.toLocaleString('en-US')} deliveries within 19 hours, so the oldest delivery ids were forgotten early. Until ${new Date(incompleteUntil).toISOString()} a re-delivery of one of them starts a second run.`;
}

export type Acceptance = { accepted: false } | { accepted: true; item: IDataObject };

/**
 * In webhook(): whether the delivery starts a run (the id was not accepted before). Deliveries without
 * an id (signatures not verified and no id header) always do. The item to start the run with carries
 * the acceptance note.
 */
export function acceptDelivery(context: IWebhookFunctions, delivery: Delivery, nowMs = Date.now()): Acceptance {
	const state = stateOf(context);
	state.memory.absorb(context.getWorkflowStaticData('node')[MEMORY_KEY], nowMs);
	if (delivery.deliveryId && state.memory.has(delivery.deliveryId)) return { accepted: false };
	if (delivery.deliveryId) state.memory.add(delivery.deliveryId, nowMs);
	const note: AcceptanceNote = { by: PROCESS_TOKEN, at: nowMs };
	if (!state.runsOwnDeliveries) note.recent = state.memory.recent(nowMs);
	const incomplete = incompleteUntil(context, state, nowMs);
	if (incomplete) note.incompleteUntil = incomplete;
	return { accepted: true, item: { ...delivery, [NOTE_FIELD]: note as unknown as IDataObject } };
}

function noteOf(item: INodeExecutionData): AcceptanceNote | undefined {
	const note = item.json[NOTE_FIELD] as AcceptanceNote | undefined;
	return note && typeof note === 'object' && typeof note.by === 'string' ? note : undefined;
}

function withoutNote(item: INodeExecutionData): INodeExecutionData {
	const json = { ...item.json };
	delete json[NOTE_FIELD];
	return { ...item, json };
}

function deliveryIdOf(item: INodeExecutionData): string | undefined {
	return (typeof item.json.deliveryId === 'string' && item.json.deliveryId) || undefined;
}

/**
 * In execute(): the items of this run that go on past the trigger, without their notes. A delivery
 * whose run started before, here or in another process, or starts elsewhere at the same moment, is
 * left out.
 */
export async function claimRuns(context: IExecuteFunctions, received: INodeExecutionData[], nowMs = Date.now()): Promise<INodeExecutionData[]> {
	const items = received.map(withoutNote);
	if (context.getMode() === 'manual') return items;
	const state = stateOf(context);
	const notes = received.map(noteOf);
	const acceptedAt = notes.map((note) => note?.at).filter((at): at is number => typeof at === 'number');
	if (acceptedAt.length) setRunOrder(context, Math.min(...acceptedAt));

	// Taken before anything is awaited: a second run of the same id in this process stops here.
	const ids = [...new Set(items.map(deliveryIdOf))].filter((deliveryId): deliveryId is string => !!deliveryId && !state.claiming.has(deliveryId));
	const acceptedHere = notes.every((note) => note?.by === PROCESS_TOKEN);
	if (acceptedHere) state.runsOwnDeliveries = true;
	for (const deliveryId of ids) state.claiming.add(deliveryId);
	let owned: Set<string>;
	try {
		owned = await claim(context, state, ids, acceptedHere, nowMs);
	} finally {
		for (const deliveryId of ids) state.claiming.delete(deliveryId);
	}

	remember(context, state, ids, notes, nowMs);
	const incomplete = Math.max(incompleteUntil(context, state, nowMs), ...notes.map((note) => note?.incompleteUntil ?? 0));
	// Older n8n has no execution hints; the log line is there in every version.
	if (incomplete > nowMs) context.addExecutionHints?.({ message: forgottenIdsNotice(incomplete), type: 'warning', location: 'outputPane' });
	return items.filter((item) => {
		const deliveryId = deliveryIdOf(item);
		return deliveryId === undefined || owned.has(deliveryId);
	});
}

/** Puts this process's memory, with what the run brought, into the node's static data for n8n to save. */
function remember(context: IExecuteFunctions, state: TriggerState, ids: string[], notes: Array<AcceptanceNote | undefined>, nowMs: number): void {
	const staticData = context.getWorkflowStaticData('node');
	state.memory.absorb(staticData[MEMORY_KEY], nowMs);
	for (const note of notes) state.memory.absorb(note?.recent, nowMs);
	for (const deliveryId of ids) state.memory.add(deliveryId, nowMs);
	// The very object: a save at the end of a longer run carries every id known by then.
	staticData[MEMORY_KEY] = state.memory.buckets;
}

async function claim(context: IExecuteFunctions, state: TriggerState, ids: string[], acceptedHere: boolean, nowMs: number): Promise<Set<string>> {
	if (ids.length === 0) return new Set();
	if (typeof context.helpers?.checkProcessedAndRecord !== 'function') return claimWithoutStore(state, ids, nowMs);
	return acceptedHere ? await claimAcceptedHere(context, state, ids) : await claimAcrossProcesses(context, state, ids);
}

async function claimAcceptedHere(context: IExecuteFunctions, state: TriggerState, ids: string[]): Promise<Set<string>> {
	const processed = await recordInStore(context, state, ids, ids);
	return new Set(ids.filter((deliveryId) => !processed.has(deliveryId)));
}

async function claimAcrossProcesses(context: IExecuteFunctions, state: TriggerState, ids: string[]): Promise<Set<string>> {
	const runToken = randomBytes(9).toString('base64url');
	const tokenOf = (deliveryId: string) => `${deliveryId} run ${runToken}`;
	const entriesOf = (deliveryIds: string[]) => deliveryIds.flatMap((deliveryId) => [deliveryId, tokenOf(deliveryId)]);
	const processedBefore = await recordInStore(context, state, entriesOf(ids), ids);
	const owned = new Set<string>();
	let pending = ids.filter((deliveryId) => !processedBefore.has(deliveryId));
	for (let attempt = 0; attempt < STORE_ATTEMPTS && pending.length > 0; attempt++) {
		// A little jitter, so that runs of two processes that overwrote each other do not meet again.
		await sleep(onceOnlyTiming.settleMs * (1 + Math.random() / 2));
		const processed = await recordInStore(context, state, entriesOf(pending), pending);
		for (const deliveryId of pending) if (processed.has(tokenOf(deliveryId))) owned.add(deliveryId);
		pending = pending.filter((deliveryId) => !owned.has(deliveryId) && !processed.has(deliveryId));
	}
	if (pending.length > 0) throw couldNotRecord(context, pending);
	return owned;
}

function claimWithoutStore(state: TriggerState, ids: string[], nowMs: number): Set<string> {
	state.startedWithoutStore ??= new DeliveryLog();
	const started = state.startedWithoutStore;
	const owned = new Set(ids.filter((deliveryId) => !started.has(deliveryId)));
	for (const deliveryId of ids) started.add(deliveryId, nowMs);
	return owned;
}

/**
 * Records entries in the trigger's store row and answers those that were there already. Calls of one
 * process go one batch at a time, so they never overwrite each other, and a burst's runs share calls.
 */
async function recordInStore(context: IExecuteFunctions, state: TriggerState, entries: string[], deliveryIds: string[]): Promise<Set<string>> {
	const answer = new Promise<Set<string>>((resolve, reject) => state.pendingCalls.push({ context, entries, resolve, reject }));
	if (!state.calling) void callStoreInBatches(state);
	const processed = await answer.catch(() => undefined);
	if (!processed) throw couldNotRecord(context, deliveryIds);
	return processed;
}

async function callStoreInBatches(state: TriggerState): Promise<void> {
	state.calling = true;
	try {
		while (state.pendingCalls.length > 0) {
			const batch = state.pendingCalls.splice(0);
			const entries = [...new Set(batch.flatMap((call) => call.entries))];
			let processed: Set<string> | undefined;
			let failure: unknown;
			for (let attempt = 0; attempt < STORE_ATTEMPTS && !processed; attempt++) {
				try {
					// Any call's context will do: all of them name the same workflow and node, so the same row.
					const recorded = await batch[0].context.helpers.checkProcessedAndRecord(entries, 'node', STORE_OPTIONS);
					processed = new Set(recorded.processed.map(String));
				} catch (error) {
					failure = error;
				}
			}
			for (const call of batch) {
				if (processed) call.resolve(processed);
				else call.reject(failure);
			}
		}
	} finally {
		state.calling = false;
	}
}

function couldNotRecord(context: IExecuteFunctions, deliveryIds: string[]): NodeOperationError {
	return new NodeOperationError(
		context.getNode(),
		`Could not record the start of the run for delivery ${deliveryIds.join(', ')} in n8n's database, so the workflow did not go on (to never run one delivery twice)`,
		{ description: 'Check that n8n can write to its database. The service re-delivers the event only if it did not receive our 200; look the event up in the service before acting on it by hand.' },
	);
}

/** When the workflow is deactivated: forgets what this process kept for the trigger (static data keeps the ids). */
export function releaseTrigger(context: IHookFunctions): void {
	triggers.delete(triggerKey(context));
}
