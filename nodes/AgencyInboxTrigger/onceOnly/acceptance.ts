/**
 * Accepting a delivery, in webhook(): an id whose run ended is answered 200 "already run", no run; an id
 * whose run goes on here is answered 409, no run (the service retries later); any other id starts a run
 * (its first delivery, or one whose run was cut: a crash took the process's memory, or in queue mode
 * n8n answered its run with an error, or another process accepted it) and counts as running here until
 * n8n answers it; the run's claim decides whether it goes on. The check and the add
 * have no await between them, so overlapping re-deliveries cannot both pass. The run's item carries a
 * note for the claim (claimRuns.ts): which process accepted it, when, and in queue mode the ids this
 * process knows finished. A no-run answer also writes the finished ids into the static data
 * when the database lacks some (n8n saves a change made in webhook() when no run starts).
 */
import type { IDataObject, INodeExecutionData, IWebhookFunctions } from 'n8n-workflow';

import { urlOf } from '../../shared/processMemory';
import type { Delivery } from '../delivery';
import type { StoredDeliveries } from '../deliveryLog';
import { type WatchedResponse, watchAnswer } from './answerWatch';
import { answerEnded, incompleteUntil, isRunningHere, MEMORY_KEY, PROCESS_TOKEN, startRunning, stateOf } from './triggerMemory';

/** The item field that carries the acceptance note from webhook() to the run; removed by the claim. */
const NOTE_FIELD = 'agencyInboxAcceptance';

export interface AcceptanceNote {
	/** The PROCESS_TOKEN of the process that accepted the delivery. */
	by: string;
	/** When it was accepted (ms): the run's place in the request budget's queue. */
	at: number;
	/** Ids the accepting process knows finished, for the save of a run in another process. */
	recent?: StoredDeliveries;
	/** Set when the accepting process had forgotten ids early (beyond the cap): until when. */
	incompleteUntil?: number;
}

export type Acceptance =
	/** Its run ended: answer 200, no run. */
	| { outcome: 'ran' }
	/** Its run goes on: answer 409, no run; the service retries later. */
	| { outcome: 'running' }
	/** Start a run with this item. */
	| { outcome: 'accepted'; item: IDataObject };

/**
 * Whether the delivery starts a run, and the item to start it with. Deliveries without an id (signatures
 * not verified and no id header) and deliveries at the Test URL always start one, and nothing is kept
 * for them.
 */
export function acceptDelivery(context: IWebhookFunctions, delivery: Delivery, response: WatchedResponse, nowMs = Date.now()): Acceptance {
	const deliveryId = delivery.deliveryId;
	if (urlOf(context.getMode()) === 'test' || !deliveryId) return { outcome: 'accepted', item: { ...delivery } };
	const state = stateOf(context);
	const staticData = context.getWorkflowStaticData('node');
	state.finished.absorb(staticData[MEMORY_KEY], nowMs);
	const known = state.finished.has(deliveryId) ? 'ran' : isRunningHere(state, deliveryId, nowMs) ? 'running' : undefined;
	if (known) {
		// Answered without a run, so n8n saves this: the ids an overwritten save lost are back.
		if (state.finished.isMissingFrom(staticData[MEMORY_KEY])) staticData[MEMORY_KEY] = state.finished.storedWith([], nowMs);
		return { outcome: known };
	}
	startRunning(state, deliveryId, nowMs);
	watchAnswer(response, (status) => answerEnded(state, deliveryId, status, Date.now()));
	const note: AcceptanceNote = { by: PROCESS_TOKEN, at: nowMs };
	if (!state.runsOwnDeliveries) note.recent = state.finished.recent(nowMs);
	const incomplete = incompleteUntil(context, state, nowMs);
	if (incomplete) note.incompleteUntil = incomplete;
	return { outcome: 'accepted', item: { ...delivery, [NOTE_FIELD]: note as unknown as IDataObject } };
}

export function noteOf(item: INodeExecutionData): AcceptanceNote | undefined {
	const note = item.json[NOTE_FIELD] as AcceptanceNote | undefined;
	return note && typeof note === 'object' && typeof note.by === 'string' ? note : undefined;
}

export function withoutNote(item: INodeExecutionData): INodeExecutionData {
	const json = { ...item.json };
	delete json[NOTE_FIELD];
	return { ...item, json };
}
