/**
 * Claiming, in execute() (the first step of the run a delivery starts): which items go on past the
 * trigger. The setup is chosen once per run from the acceptance notes: a run whose deliveries this
 * process accepted is n8n's default setup (defaultSetupClaim.ts); any other is queue mode
 * (queueModeClaim.ts). Then the run remembers: it puts the finished ids it knows, plus its own
 * deliveries, into the node's static data, computed when n8n saves it at the run's end. So a delivery's
 * id reaches the database with its run's end, never before, and runs that end one after the other do
 * not drop each other's ids.
 *
 * The user's Retry of an execution (mode 'retry') always goes on, and so does the Test URL (mode
 * 'manual'): neither fills anything of the Production URL's. A Retry's items say which execution ran
 * their delivery again after the cut run, if the trigger knows of one (runsAgain.ts).
 */
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { urlOf } from '../../shared/processMemory';
import { setRunOrder } from '../../shared/runOrder';
import type { DeliveryLog, StoredDeliveries } from '../deliveryLog';
import { type AcceptanceNote, noteOf, withoutNote } from './acceptance';
import { claimOwnDeliveries } from './defaultSetupClaim';
import { claimOthersDeliveries } from './queueModeClaim';
import { type Claimed, noteRunsAgain, ranAgainIn } from './runsAgain';
import { forgottenIdsNotice, incompleteUntil, MEMORY_KEY, PROCESS_TOKEN, stateOf, type TriggerState } from './triggerMemory';

/** The items of this run that go on past the trigger, without their notes. */
export async function claimRuns(context: IExecuteFunctions, received: INodeExecutionData[], nowMs = Date.now()): Promise<INodeExecutionData[]> {
	const items = received.map(withoutNote);
	if (urlOf(context.getMode()) === 'test') return items;
	const state = stateOf(context);
	if (context.getMode() === 'retry') return items.map((item) => withRanAgainIn(context, state, item, nowMs));
	const notes = received.map(noteOf);
	const acceptedAt = notes.map((note) => note?.at).filter((at): at is number => typeof at === 'number');
	if (acceptedAt.length) setRunOrder(context, Math.min(...acceptedAt));

	const ids = [...new Set(items.map(deliveryIdOf))].filter((deliveryId): deliveryId is string => !!deliveryId);
	let claimed: Claimed;
	if (notes.length > 0 && notes.every((note) => note?.by === PROCESS_TOKEN)) {
		state.runsOwnDeliveries = true;
		claimed = await claimOwnDeliveries(context, state, ids, nowMs);
	} else {
		claimed = await claimOthersDeliveries(context, state, ids, nowMs);
	}
	const { owned, runAgain } = claimed;

	remember(context, state, [...owned], notes, nowMs);
	if (runAgain.length > 0) noteRunsAgain(state.runsAgain, context.getWorkflowStaticData('node'), runAgain, executionOf(context), nowMs);
	const incomplete = Math.max(incompleteUntil(context, state, nowMs), ...notes.map((note) => note?.incompleteUntil ?? 0));
	// Older n8n has no execution hints; the log line is there in every version.
	if (incomplete > nowMs) context.addExecutionHints?.({ message: forgottenIdsNotice(incomplete), type: 'warning', location: 'outputPane' });
	return items.filter((item) => {
		const deliveryId = deliveryIdOf(item);
		return deliveryId === undefined || owned.has(deliveryId);
	});
}

/** A Retry's item: with the execution that ran its delivery again after the cut run, or null. */
function withRanAgainIn(context: IExecuteFunctions, state: TriggerState, item: INodeExecutionData, nowMs: number): INodeExecutionData {
	const deliveryId = deliveryIdOf(item);
	const execution = deliveryId === undefined ? null : ranAgainIn(state.runsAgain, context.getWorkflowStaticData('node'), deliveryId, nowMs);
	return { ...item, json: { ...item.json, ranAgainIn: execution } };
}

const executionOf = (context: IExecuteFunctions) => String(context.getExecutionId?.() ?? '');

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

/** Puts the finished ids this process knows, with what the run brought, and the run's own deliveries into the node's static data. */
function remember(context: IExecuteFunctions, state: TriggerState, owned: string[], notes: Array<AcceptanceNote | undefined>, nowMs: number): void {
	const staticData = context.getWorkflowStaticData('node');
	state.finished.absorb(staticData[MEMORY_KEY], nowMs);
	for (const note of notes) state.finished.absorb(note?.recent, nowMs);
	staticData[MEMORY_KEY] = new DeliveriesOfRun(state.finished, owned, nowMs) as unknown as IDataObject;
}
