import type { IDataObject } from 'n8n-workflow';

import { compareMarks, higherMark } from '../shared/marks';
import type { WatermarkState } from '../shared/proposalWatermark';
import { watermarkStateFrom } from '../shared/proposalWatermark';

/** The Proposal Trigger keeps one watermark of the proposal list (nodes/shared/proposalWatermark.ts). */
export type ProposalTriggerState = WatermarkState;

/**
 * Spec rule 5 bootstraps with the clock noted before a full pass without `updatedSince`. The full pass
 * only serves to read history, and this trigger emits nothing historic, so it would cost one request
 * per page of the agency's whole history (hundreds at 20 per minute) to produce nothing: skipped.
 * Everything that changes from now on carries an `updatedAt` at or after the noted time.
 */
export function bootstrapProposalState(now: Date): ProposalTriggerState {
	return { watermark: { at: now.toISOString(), uids: [] } };
}

/** The state kept in the node's static data, or undefined before the first activation. */
export function loadProposalState(staticData: IDataObject): ProposalTriggerState | undefined {
	return watermarkStateFrom(staticData);
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
