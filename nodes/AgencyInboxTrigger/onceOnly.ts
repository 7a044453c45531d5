/**
 * Once-only delivery, acknowledged once it is safe: each delivery the Agency Inbox Trigger accepts
 * starts one run that goes on past the trigger, however often the service re-delivers it and however
 * many n8n processes serve it, and the service hears our 200 only when that run has ended. The trigger's
 * webhook answers when the run's last node has run (`responseMode: 'lastNode'`: n8n answers 200 for a
 * run that ended, 500 for one that failed), so a run cut by a crash is never acknowledged: the service
 * re-delivers it and it runs again. The trigger calls `acceptDelivery` in webhook(), `claimRuns` in
 * execute() (the first step of the run a delivery starts); delete() lets go of the URL `urlEnding` names
 * (processMemory.ts `releaseNode`).
 *
 * What one process keeps per trigger node, at its Production URL (key: workflow, node, production):
 * - finished: ids whose run has ended. Learned from n8n's answer to the delivery (any answer when the
 *   run's trigger step ran in this process, n8n's default setup; else, in a webhook process of queue
 *   mode, a 200 only, because n8n answers a failed run and a run whose worker was killed alike, with a
 *   500, and a run n8n could not start at all with a 500 too), and from the node's static data, which
 *   n8n reads from its database for every request and writes at the end of every run that changed it,
 *   failed runs included.
 * - running: ids accepted here that n8n has not answered yet (at most RUNNING_BELIEF_MS), and of those
 *   the ones whose run's trigger step ran here (each with an open entry in the store where n8n has one,
 *   removed at the answer through the store's helpers from the latest run).
 * - attempts: ids whose earlier runs n8n answered with an error here (queue mode), how many.
 *
 * 1. Accept, in webhook(). An id that is finished is answered 200 "already run", no run. A running id
 *    is answered 409, no run: its run goes on, and the service retries later. Any other id starts a run
 *    (its first delivery, or one whose run was cut: a crash took the process's memory, or in queue mode
 *    n8n answered its run with an error and its id is not in the static data) and is running until n8n
 *    answers it, watched on the response (the service may have hung up first: it waits 15 s or so).
 *    The check and the add have no await between them, so overlapping re-deliveries cannot both pass.
 *    The run's item carries a note: which process accepted it, when, its attempt, and (for queue mode)
 *    the ids this process knows finished. A no-run answer also writes the finished ids into the static
 *    data when the database lacks some (n8n saves a change made in webhook() when no run starts).
 * 2. Claim, in execute(). A run whose delivery this process accepted (n8n's default setup) records its
 *    id and an open entry in n8n's deduplication store (below), which the process removes once n8n has
 *    answered the run (it ended); it goes on (webhook() let it start only while no other run of it went
 *    on here), unless the store already held the id without the open entry: an earlier run of it ended.
 *    That covers what the static data cannot: runs that end together each save the static data without
 *    the others' ids (n8n writes it whole, the last save wins), and when the service had stopped
 *    waiting, n8n's answer reached only this process's memory, gone with a restart. The id and the open
 *    entry both there: an earlier run started and its end is not known (a crash), so it runs again.
 *    A run in another process (a queue-mode worker) claims
 *    its delivery and attempt in n8n's deduplication store (`checkProcessedAndRecord`: one database row
 *    per workflow and node, shared by every process; n8n reads the row and writes it back whole, without
 *    a lock): it records the claim and a token naming its execution, waits settleMs (any write that read
 *    the row before ours has landed by then) and records the token again. The token already there means
 *    the claim is this run's (or this execution's, run again by n8n after its worker died: n8n 1.x does
 *    that); the claim there without the token means another run of the same delivery wrote last and owns
 *    it; neither means another delivery's run overwrote both, and recording again has put them back.
 *    That costs settleMs (1 to 1.5 s) per run. A process sends its calls to the row one batch at a time
 *    (records and removals), so they never overwrite each other and a burst's runs share calls. The row
 *    keeps the last STORE_ENTRIES entries (two per delivery).
 * 3. Remember, in execute(): the run puts the finished ids it knows, plus its own delivery, into the
 *    node's static data, computed when n8n saves it at the run's end. So a delivery's id reaches the
 *    database with its run's end, never before, and runs that end one after the other do not drop each
 *    other's ids (in one process: the ids of runs that ended are in `finished` by then).
 *
 * The user's Retry of an execution (mode 'retry') always goes on past the trigger, and so does the Test
 * URL (mode 'manual'): a test delivery neither reads nor fills anything of the Production URL's, and
 * keeps nothing itself (the editor shows each test event).
 *
 * Failure: a call to the store is tried STORE_ATTEMPTS times, then the run fails with an error and does
 * not go on, so a delivery never runs unclaimed; n8n answers the delivery 500 and the service retries it.
 *
 * Where n8n has no deduplication store (older n8n, such as 1.49.0 of the compatibility ladder), a run in
 * the process that accepted it goes on, and a run in another process is claimed in that process only.
 *
 * Beyond the memory's cap (120,000 ids within 19 hours) the oldest ids are forgotten early: a
 * re-delivery of one would start a second run, so every run accepted meanwhile carries an execution
 * hint and n8n's log gets a warning once an hour.
 */
import { randomBytes } from 'node:crypto';

import type { IDataObject, IExecuteFunctions, IHookFunctions, INodeExecutionData, IWebhookFunctions } from 'n8n-workflow';
import { NodeOperationError, sleep } from 'n8n-workflow';

import type { NodeOwner, Url } from '../shared/processMemory';
import { nodeOwnerOf, processStore, urlOf } from '../shared/processMemory';
import { setRunOrder } from '../shared/runOrder';
import type { Delivery } from './delivery';
import { DELIVERY_MEMORY_MS, DeliveryLog, MAX_REMEMBERED_DELIVERIES, type StoredDeliveries } from './deliveryLog';

/**
 * settleMs: long enough for any write that read the row before ours to have landed (tests shorten it).
 * answerCheckMs: how soon the end of a run whose sender hung up is seen, and marked in the store.
 */
export const onceOnlyTiming = { settleMs: 1_000, answerCheckMs: 200 };

const STORE_ATTEMPTS = 8;
/** The store row's cap in entries: two per delivery run in queue mode (a row of about 53 KB). */
export const STORE_ENTRIES = 2_000;
const STORE_OPTIONS = { mode: 'entries', maxEntries: STORE_ENTRIES } as const;

/** Static data key of the ids whose runs ended (0.1.0 kept a plain list of accepted ids under the same key). */
const MEMORY_KEY = 'acceptedDeliveries';
/** The item field that carries the acceptance note from webhook() to the run; removed in execute(). */
const NOTE_FIELD = 'agencyInboxAcceptance';
const HOUR_MS = 60 * 60 * 1000;
/**
 * How long an id counts as running when n8n has not answered it: as long as the service retries
 * (17.6 h). A run still going then is not known any more, and a re-delivery of it would run again.
 */
export const RUNNING_BELIEF_MS = DELIVERY_MEMORY_MS;
/** At most this many ids with an error answer are kept per trigger node (the oldest go first). */
const MAX_ATTEMPTS_KEPT = 10_000;
/** Past this many running ids, those older than RUNNING_BELIEF_MS are looked for and let go. */
const MAX_RUNNING_KEPT = 10_000;

/** Tells this process's acceptances from those of other processes (and of this one before a restart). */
const PROCESS_TOKEN = randomBytes(9).toString('base64url');

interface AcceptanceNote {
	/** The PROCESS_TOKEN of the process that accepted the delivery. */
	by: string;
	/** When it was accepted (ms): the run's place in the request budget's queue. */
	at: number;
	/** How many earlier runs of the delivery n8n answered with an error in the accepting process. */
	attempt?: number;
	/** Ids the accepting process knows finished, for the save of a run in another process. */
	recent?: StoredDeliveries;
	/** Set when the accepting process had forgotten ids early (beyond the cap): until when. */
	incompleteUntil?: number;
}

/** n8n's deduplication store as a run's context hands it out: all of one trigger node's calls go to its row. */
interface DeliveryStore {
	checkProcessedAndRecord: IExecuteFunctions['helpers']['checkProcessedAndRecord'];
	removeProcessed: IExecuteFunctions['helpers']['removeProcessed'];
	warn: (message: string) => void;
}

interface PendingCall {
	store: DeliveryStore;
	entries: string[];
	/** Removes the entries instead of recording them. */
	remove: boolean;
	resolve: (processed: Set<string>) => void;
	reject: (error: unknown) => void;
}

/** What one process keeps for one trigger node at its Production URL. */
interface TriggerState {
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
	/** Ids whose earlier runs n8n answered with an error here: how many. */
	attempts: Map<string, number>;
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

/** Each trigger node's memory at its Production URL. */
const triggers = processStore<TriggerState>({
	name: 'accepted delivery ids and claims',
	belongsTo: 'a webhook trigger node at its Production URL',
	lifetime: 'released at deactivation once no run of it goes on here; else 19 hours after its last use (its ids are kept 18 hours)',
	keptMs: DELIVERY_MEMORY_MS + HOUR_MS,
	renewedOnUse: true,
	maxEntries: 10_000,
	inUse: (state) => state.running.size > 0 || state.claiming.size > 0 || state.calling || state.pendingCalls.length > 0,
});

/** The Test URLs of listening sessions this process registered, so that their end leaves production alone. */
const listeningSessions = processStore<true>({
	name: 'listening sessions at the Test URL',
	belongsTo: 'a webhook trigger node at its Test URL',
	lifetime: 'until the session ends (delete()), at most an hour (n8n ends a session after 2 minutes)',
	keptMs: HOUR_MS,
	renewedOnUse: false,
	maxEntries: 10_000,
});

type NodeFunctions = IWebhookFunctions | IExecuteFunctions | IHookFunctions;

/** Once-only delivery is for the Production URL, whatever mode a run of it has (a Retry's included). */
function productionOwner(context: NodeFunctions): NodeOwner {
	return { ...nodeOwnerOf(context), url: 'production' };
}

function stateOf(context: IWebhookFunctions | IExecuteFunctions): TriggerState {
	return triggers.obtain(productionOwner(context), () => ({
		finished: new DeliveryLog(),
		running: new Map(),
		ranHere: new Set(),
		attempts: new Map(),
		claiming: new Set(),
		pendingCalls: [],
		calling: false,
		runsOwnDeliveries: false,
		warnedHour: -1,
	}));
}

/** Until when the memory is incomplete (ids forgotten early), with a warning in n8n's log once an hour; 0 when it is not. */
function incompleteUntil(context: IWebhookFunctions | IExecuteFunctions, state: TriggerState, nowMs: number): number {
	if (state.finished.incompleteUntil <= nowMs) return 0;
	const hour = Math.floor(nowMs / HOUR_MS);
	if (state.warnedHour !== hour) {
		state.warnedHour = hour;
		context.logger.warn(forgottenIdsNotice(state.finished.incompleteUntil));
	}
	return state.finished.incompleteUntil;
}

function forgottenIdsNotice(incompleteUntil: number): string {
	return `Agency Inbox Trigger: more than ${MAX_REMEMBERED_DELIVERIES.toLocaleString('en-US')} deliveries within 19 hours, so the oldest delivery ids were forgotten early. Until ${new Date(incompleteUntil).toISOString()} a re-delivery of one of them starts a second run.`;
}

/** What the trigger reads of n8n's response object (an Express response). */
export interface WatchedResponse {
	statusCode: number;
	writableEnded?: boolean;
	writableFinished?: boolean;
	once?(event: 'finish' | 'close', listener: () => void): unknown;
}

/**
 * Calls `onAnswer` with the status once n8n has answered the request, or with undefined when it has
 * not within RUNNING_BELIEF_MS. A sender that hung up first never sees the answer ('finish' does not
 * fire), but n8n still ends the response when the run ends: that is checked every answerCheckMs.
 */
function watchAnswer(response: WatchedResponse, onAnswer: (status: number | undefined) => void, nowMs: number): void {
	if (typeof response.once !== 'function') return;
	let answered = false;
	const answer = (status: number | undefined) => {
		if (answered) return;
		answered = true;
		onAnswer(status);
	};
	response.once('finish', () => answer(response.statusCode));
	response.once('close', () => {
		if (response.writableFinished) return;
		void (async () => {
			while (!response.writableEnded && Date.now() < nowMs + RUNNING_BELIEF_MS) await sleep(onceOnlyTiming.answerCheckMs);
			answer(response.writableEnded ? response.statusCode : undefined);
		})();
	});
}

function answerEnded(state: TriggerState, deliveryId: string, status: number | undefined, nowMs: number): void {
	state.running.delete(deliveryId);
	const ranHere = state.ranHere.delete(deliveryId);
	if (status !== undefined && (ranHere || (status >= 200 && status < 300))) {
		state.finished.add(deliveryId, nowMs);
		state.attempts.delete(deliveryId);
		if (ranHere && state.store) removeFromStore(state, state.store, [openEntry(deliveryId)]);
		return;
	}
	const attempts = (state.attempts.get(deliveryId) ?? 0) + 1;
	// Deleted and set again, so the map stays in order of the latest answer and the oldest go first.
	state.attempts.delete(deliveryId);
	state.attempts.set(deliveryId, attempts);
	if (state.attempts.size > MAX_ATTEMPTS_KEPT) state.attempts.delete(state.attempts.keys().next().value!);
}

/** Ids n8n never answered (a response that neither finished nor closed) are let go after RUNNING_BELIEF_MS. */
function forgetStaleRunning(state: TriggerState, nowMs: number): void {
	for (const [deliveryId, acceptedAt] of state.running) {
		if (acceptedAt > nowMs - RUNNING_BELIEF_MS) continue;
		state.running.delete(deliveryId);
		state.ranHere.delete(deliveryId);
	}
}

export type Acceptance =
	/** Its run ended: answer 200, no run. */
	| { outcome: 'ran' }
	/** Its run goes on: answer 409, no run; the service retries later. */
	| { outcome: 'running' }
	/** Start a run with this item. */
	| { outcome: 'accepted'; item: IDataObject };

/**
 * In webhook(): whether the delivery starts a run, and the item to start it with (carrying the
 * acceptance note). Deliveries without an id (signatures not verified and no id header) and deliveries
 * at the Test URL always start one, and nothing is kept for them.
 */
export function acceptDelivery(context: IWebhookFunctions, delivery: Delivery, response: WatchedResponse, nowMs = Date.now()): Acceptance {
	const deliveryId = delivery.deliveryId;
	if (urlOf(context.getMode()) === 'test' || !deliveryId) return { outcome: 'accepted', item: { ...delivery } };
	const state = stateOf(context);
	const staticData = context.getWorkflowStaticData('node');
	state.finished.absorb(staticData[MEMORY_KEY], nowMs);
	const running = state.running.get(deliveryId);
	const known = state.finished.has(deliveryId) ? 'ran' : running !== undefined && running > nowMs - RUNNING_BELIEF_MS ? 'running' : undefined;
	if (known) {
		// Answered without a run, so n8n saves this: the ids an overwritten save lost are back.
		if (state.finished.isMissingFrom(staticData[MEMORY_KEY])) staticData[MEMORY_KEY] = state.finished.storedWith([], nowMs);
		return { outcome: known };
	}
	if (state.running.size >= MAX_RUNNING_KEPT) forgetStaleRunning(state, nowMs);
	state.running.set(deliveryId, nowMs);
	watchAnswer(response, (status) => answerEnded(state, deliveryId, status, Date.now()), nowMs);
	const note: AcceptanceNote = { by: PROCESS_TOKEN, at: nowMs };
	const attempt = state.attempts.get(deliveryId);
	if (attempt) note.attempt = attempt;
	if (!state.runsOwnDeliveries) note.recent = state.finished.recent(nowMs);
	const incomplete = incompleteUntil(context, state, nowMs);
	if (incomplete) note.incompleteUntil = incomplete;
	return { outcome: 'accepted', item: { ...delivery, [NOTE_FIELD]: note as unknown as IDataObject } };
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

/** What a run puts into static data: the finished ids it knows and its own deliveries, as stored when n8n saves it. */
class DeliveriesOfRun {
	constructor(
		private readonly finished: DeliveryLog,
		private readonly own: string[],
		private readonly atMs: number,
	) {}

	toJSON(): StoredDeliveries {
		return this.finished.storedWith(this.own, this.atMs);
	}
}

/**
 * In execute(): the items of this run that go on past the trigger, without their notes. A delivery
 * whose run goes on in another process, or ran there before, is left out.
 */
export async function claimRuns(context: IExecuteFunctions, received: INodeExecutionData[], nowMs = Date.now()): Promise<INodeExecutionData[]> {
	const items = received.map(withoutNote);
	// The editor's runs (Test URL, manual executions) and the user's Retry always go on, keeping nothing.
	if (urlOf(context.getMode()) === 'test' || context.getMode() === 'retry') return items;
	const state = stateOf(context);
	const notes = received.map(noteOf);
	const acceptedAt = notes.map((note) => note?.at).filter((at): at is number => typeof at === 'number');
	if (acceptedAt.length) setRunOrder(context, Math.min(...acceptedAt));

	const ids = [...new Set(items.map(deliveryIdOf))].filter((deliveryId): deliveryId is string => !!deliveryId);
	let owned: Set<string>;
	if (notes.length > 0 && notes.every((note) => note?.by === PROCESS_TOKEN)) {
		state.runsOwnDeliveries = true;
		owned = await claimOwn(context, state, ids, nowMs);
	} else {
		owned = await claimElsewhere(context, state, ids, attemptsOf(received, notes), nowMs);
	}

	remember(context, state, [...owned], notes, nowMs);
	const incomplete = Math.max(incompleteUntil(context, state, nowMs), ...notes.map((note) => note?.incompleteUntil ?? 0));
	// Older n8n has no execution hints; the log line is there in every version.
	if (incomplete > nowMs) context.addExecutionHints?.({ message: forgottenIdsNotice(incomplete), type: 'warning', location: 'outputPane' });
	return items.filter((item) => {
		const deliveryId = deliveryIdOf(item);
		return deliveryId === undefined || owned.has(deliveryId);
	});
}

function attemptsOf(received: INodeExecutionData[], notes: Array<AcceptanceNote | undefined>): Map<string, number> {
	const attempts = new Map<string, number>();
	received.forEach((item, index) => {
		const deliveryId = deliveryIdOf(item);
		if (deliveryId) attempts.set(deliveryId, Math.max(attempts.get(deliveryId) ?? 0, notes[index]?.attempt ?? 0));
	});
	return attempts;
}

/** Puts the finished ids this process knows, with what the run brought, and the run's own deliveries into the node's static data. */
function remember(context: IExecuteFunctions, state: TriggerState, owned: string[], notes: Array<AcceptanceNote | undefined>, nowMs: number): void {
	const staticData = context.getWorkflowStaticData('node');
	state.finished.absorb(staticData[MEMORY_KEY], nowMs);
	for (const note of notes) state.finished.absorb(note?.recent, nowMs);
	staticData[MEMORY_KEY] = new DeliveriesOfRun(state.finished, owned, nowMs) as unknown as IDataObject;
}

/** The store entry that stands while a run of the delivery has started and its end is not known. */
function openEntry(deliveryId: string): string {
	return `${deliveryId} open`;
}

function storeOf(context: IExecuteFunctions): DeliveryStore | undefined {
	const helpers = context.helpers;
	if (typeof helpers?.checkProcessedAndRecord !== 'function' || typeof helpers.removeProcessed !== 'function') return undefined;
	return {
		checkProcessedAndRecord: helpers.checkProcessedAndRecord.bind(helpers),
		removeProcessed: helpers.removeProcessed.bind(helpers),
		warn: (message) => context.logger.warn(message),
	};
}

/**
 * The claim of a run whose delivery this process accepted (n8n's default setup). webhook() let it
 * start only while no other run of it went on here, so it goes on, unless n8n's store shows that an
 * earlier run of it ended: its id and no open entry (runs that ended together each saved the static
 * data without the others' ids, and a restart took the memory of n8n's answers). Where n8n has no store,
 * it goes on.
 */
async function claimOwn(context: IExecuteFunctions, state: TriggerState, ids: string[], nowMs: number): Promise<Set<string>> {
	const store = storeOf(context);
	const owned = new Set(ids);
	if (store && ids.length > 0) {
		state.store = store;
		// Records the id and the open entry; both there already: an earlier run started and its end is not known, so it runs again.
		const recorded = await recordInStore(context, state, store, ids.flatMap((deliveryId) => [deliveryId, openEntry(deliveryId)]), ids);
		const endedBefore = ids.filter((deliveryId) => recorded.has(deliveryId) && !recorded.has(openEntry(deliveryId)));
		for (const deliveryId of endedBefore) {
			owned.delete(deliveryId);
			state.finished.add(deliveryId, nowMs);
		}
		if (endedBefore.length > 0) removeFromStore(state, store, endedBefore.map(openEntry));
	}
	for (const deliveryId of owned) if (state.running.has(deliveryId)) state.ranHere.add(deliveryId);
	return owned;
}

/** The claim of a run whose delivery another process accepted (queue mode). */
async function claimElsewhere(context: IExecuteFunctions, state: TriggerState, ids: string[], attempts: Map<string, number>, nowMs: number): Promise<Set<string>> {
	// Taken before anything is awaited: a second run of the same id in this process stops here.
	const claimable = ids.filter((deliveryId) => !state.claiming.has(deliveryId));
	if (claimable.length === 0) return new Set();
	for (const deliveryId of claimable) state.claiming.add(deliveryId);
	try {
		const store = storeOf(context);
		if (!store) return claimWithoutStore(state, claimable, attempts, nowMs);
		return await claimInStore(context, state, store, claimable, attempts);
	} finally {
		for (const deliveryId of claimable) state.claiming.delete(deliveryId);
	}
}

/** The store entry of a delivery's claim: its id for the first attempt (as 0.2 recorded it), then one per attempt. */
function claimEntry(deliveryId: string, attempt: number): string {
	return attempt === 0 ? deliveryId : `${deliveryId} attempt ${attempt + 1}`;
}

async function claimInStore(context: IExecuteFunctions, state: TriggerState, store: DeliveryStore, ids: string[], attempts: Map<string, number>): Promise<Set<string>> {
	const runToken = String(context.getExecutionId?.() || randomBytes(9).toString('base64url'));
	const claimOf = (deliveryId: string) => claimEntry(deliveryId, attempts.get(deliveryId) ?? 0);
	const tokenOf = (deliveryId: string) => `${claimOf(deliveryId)} run ${runToken}`;
	const entriesOf = (deliveryIds: string[]) => deliveryIds.flatMap((deliveryId) => [claimOf(deliveryId), tokenOf(deliveryId)]);
	const recordedBefore = await recordInStore(context, state, store, entriesOf(ids), ids);
	// The token there already: n8n runs this execution again (its worker died), so the claim is still ours.
	const owned = new Set(ids.filter((deliveryId) => recordedBefore.has(tokenOf(deliveryId))));
	let pending = ids.filter((deliveryId) => !owned.has(deliveryId) && !recordedBefore.has(claimOf(deliveryId)));
	for (let attempt = 0; attempt < STORE_ATTEMPTS && pending.length > 0; attempt++) {
		// A little jitter, so that runs of two processes that overwrote each other do not meet again.
		await sleep(onceOnlyTiming.settleMs * (1 + Math.random() / 2));
		const recorded = await recordInStore(context, state, store, entriesOf(pending), pending);
		for (const deliveryId of pending) if (recorded.has(tokenOf(deliveryId))) owned.add(deliveryId);
		pending = pending.filter((deliveryId) => !owned.has(deliveryId) && !recorded.has(claimOf(deliveryId)));
	}
	if (pending.length > 0) throw couldNotRecord(context, pending);
	return owned;
}

function claimWithoutStore(state: TriggerState, ids: string[], attempts: Map<string, number>, nowMs: number): Set<string> {
	state.startedWithoutStore ??= new DeliveryLog();
	const started = state.startedWithoutStore;
	const claims = ids.map((deliveryId) => [deliveryId, claimEntry(deliveryId, attempts.get(deliveryId) ?? 0)]);
	const owned = new Set(claims.filter(([, claim]) => !started.has(claim)).map(([deliveryId]) => deliveryId));
	for (const [, claim] of claims) started.add(claim, nowMs);
	return owned;
}

/**
 * Records entries in the trigger's store row and answers those that were there already. Calls of one
 * process go one batch at a time, so they never overwrite each other, and a burst's runs share calls.
 */
async function recordInStore(context: IExecuteFunctions, state: TriggerState, store: DeliveryStore, entries: string[], deliveryIds: string[]): Promise<Set<string>> {
	const processed = await callStore(state, store, entries, false).catch(() => undefined);
	if (!processed) throw couldNotRecord(context, deliveryIds);
	return processed;
}

/**
 * Removes entries from the trigger's store row, in the same line of calls. Failing, the entries stay:
 * a re-delivery that neither the memory nor the static data knows then runs again.
 */
function removeFromStore(state: TriggerState, store: DeliveryStore, entries: string[]): void {
	callStore(state, store, entries, true).catch(() => store.warn(`Agency Inbox Trigger: could not mark the end of the runs of ${entries.length} deliveries in n8n's database; a re-delivery of one that n8n's memory lost runs again.`));
}

function callStore(state: TriggerState, store: DeliveryStore, entries: string[], remove: boolean): Promise<Set<string>> {
	const answer = new Promise<Set<string>>((resolve, reject) => state.pendingCalls.push({ store, entries, remove, resolve, reject }));
	if (!state.calling) void callStoreInBatches(state);
	return answer;
}

async function callStoreInBatches(state: TriggerState): Promise<void> {
	state.calling = true;
	try {
		while (state.pendingCalls.length > 0) {
			const batch = state.pendingCalls.splice(0);
			await callBatch(batch.filter((call) => !call.remove), async (store, entries) => new Set((await store.checkProcessedAndRecord(entries, 'node', STORE_OPTIONS)).processed.map(String)));
			await callBatch(batch.filter((call) => call.remove), async (store, entries) => {
				await store.removeProcessed(entries, 'node', STORE_OPTIONS);
				return new Set<string>();
			});
		}
	} finally {
		state.calling = false;
	}
}

/** One call for the calls of a batch, tried STORE_ATTEMPTS times. Any call's store will do: all name the same workflow and node, so the same row. */
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

function couldNotRecord(context: IExecuteFunctions, deliveryIds: string[]): NodeOperationError {
	return new NodeOperationError(
		context.getNode(),
		`Could not record the start of the run for delivery ${deliveryIds.join(', ')} in n8n's database, so the workflow did not go on (to never run one delivery twice)`,
		{ description: "Check that n8n can write to its database. n8n answers this delivery with an error, so the service delivers it again on its retry schedule." },
	);
}

/** When a listening session registers the Test URL (mode 'manual'): its end must leave production alone. */
export function registerTrigger(context: IHookFunctions): void {
	if (urlOf(context.getMode()) === 'test') listeningSessions.set({ ...nodeOwnerOf(context), url: 'test' }, true, context.getNodeWebhookUrl('default') ?? '');
}

/**
 * Which of the trigger's URLs a call of delete() ends. n8n calls it when the workflow is deactivated and
 * when a listening session ends, in the same mode: a Test URL this process registered is the session's.
 */
export function urlEnding(context: IHookFunctions): Url {
	const session = { ...nodeOwnerOf(context), url: 'test' } as const;
	return listeningSessions.get(session, context.getNodeWebhookUrl('default') ?? '') ? 'test' : 'production';
}
