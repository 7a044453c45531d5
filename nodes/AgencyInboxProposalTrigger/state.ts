import type { IDataObject } from 'n8n-workflow';

import type { Mark } from '../shared/marks';
import { compareMarks, higherMark, isMark } from '../shared/marks';

/** A sweep that ran out of poll time: where to resume and which part of the ordering it already took. */
export interface PendingSweep {
	cursor: string;
	/** The highest row taken so far: the next watermark once the sweep completes. */
	top?: Mark;
	/** The lowest row taken so far: everything at or above it was emitted (or is newer, for the next sweep). */
	floor?: Mark;
}

export interface ProposalTriggerState {
	/** Highest `updatedAt` received from the service (never the clock, except the bootstrap value). */
	watermark: Mark;
	pending?: PendingSweep;
}

/**
 * Spec rule 5 bootstraps with the clock noted before a full pass without `updatedSince`. The full pass
 * only serves to read history, and this trigger emits nothing historic, so it would cost one request
 * per page of the agency's whole history (hundreds at 20 per minute) to produce nothing: skipped.
 * Everything that changes from now on carries an `updatedAt` at or after the noted time.
 */
export function bootstrapProposalState(now: Date): ProposalTriggerState {
	return { watermark: { at: now.toISOString(), uids: [] } };
}

function isPendingSweep(value: unknown): value is PendingSweep {
	const pending = value as PendingSweep | undefined;
	return (
		typeof pending?.cursor === 'string' &&
		(pending.top === undefined || isMark(pending.top)) &&
		(pending.floor === undefined || isMark(pending.floor))
	);
}

/** The state kept in the node's static data, or undefined before the first activation. */
export function loadProposalState(staticData: IDataObject): ProposalTriggerState | undefined {
	if (!isMark(staticData.watermark)) return undefined;
	const state: ProposalTriggerState = { watermark: staticData.watermark };
	if (isPendingSweep(staticData.pending)) state.pending = staticData.pending;
	return state;
}

/**
 * Whether a stored state is behind another: an earlier watermark, or the same time without every
 * proposal the other took there (the service's times are milliseconds: a change can share one with
 * the activation's starting point).
 */
export function isOlderProposalState(stored: ProposalTriggerState | undefined, than: ProposalTriggerState): boolean {
	if (!stored) return true;
	const order = compareMarks(stored.watermark, than.watermark);
	return order < 0 || (order === 0 && than.watermark.uids.some((uid) => !stored.watermark.uids.includes(uid)));
}

/**
 * What to store after a poll: its state, unless a later watermark is already stored (another poll
 * overlapped and finished first). The stored watermark never moves backwards; at the same time the
 * uids taken there are united.
 */
export function mergeWithStored(stored: ProposalTriggerState | undefined, polled: ProposalTriggerState): ProposalTriggerState {
	if (!stored) return polled;
	const order = compareMarks(stored.watermark, polled.watermark);
	if (order > 0) return stored;
	if (order < 0) return polled;
	const watermark = higherMark(stored.watermark, polled.watermark);
	return polled.pending ? { watermark, pending: polled.pending } : { watermark };
}

/** Writes the poll's state into the node's static data, never moving the stored watermark backwards. */
export function saveProposalState(staticData: IDataObject, polled: ProposalTriggerState): void {
	const state = mergeWithStored(loadProposalState(staticData), polled);
	staticData.watermark = state.watermark as unknown as IDataObject;
	if (state.pending) staticData.pending = state.pending as unknown as IDataObject;
	else delete staticData.pending;
}
