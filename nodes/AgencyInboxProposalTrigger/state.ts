import type { IDataObject } from 'n8n-workflow';

import type { Mark } from '../shared/marks';
import { compareMarks, higherMark, isMark } from '../shared/marks';
import type { WatermarkState } from '../shared/proposalWatermark';
import { watermarkStateFrom } from '../shared/proposalWatermark';
import type { ProposalBackfill } from './backfill';
import { loadProposalBackfill } from './backfill';

/** The Proposal Trigger keeps one watermark of the proposal list (nodes/shared/proposalWatermark.ts), and its backfill (backfill.ts). */
export interface ProposalTriggerState extends WatermarkState {
	/** The watermark the activation started from: the live polls own what was updated after it. Absent in a state stored before it existed. */
	liveSince?: Mark;
	/** What the backfill (Start From: A Date) handed on, and its pass under way. */
	backfill?: ProposalBackfill;
	/** Counts the polls that moved the backfill on: which of two states with one watermark is newer. */
	backfillStep?: number;
}

/**
 * Spec rule 5 bootstraps with the clock noted before a full pass without `updatedSince`. The full pass
 * only serves to read history, and this trigger emits nothing historic, so it would cost one request
 * per page of the agency's whole history (hundreds at 20 per minute) to produce nothing: skipped.
 * Everything that changes from now on carries an `updatedAt` at or after the noted time.
 */
export function bootstrapProposalState(now: Date): ProposalTriggerState {
	const watermark = { at: now.toISOString(), uids: [] };
	return { watermark, liveSince: watermark };
}

/** The state kept in the node's static data, or undefined before the first activation. */
export function loadProposalState(staticData: IDataObject): ProposalTriggerState | undefined {
	const watermarkState = watermarkStateFrom(staticData);
	if (!watermarkState) return undefined;
	const backfill = loadProposalBackfill(staticData.backfill);
	return {
		...watermarkState,
		...(isMark(staticData.liveSince) ? { liveSince: staticData.liveSince } : {}),
		...(backfill ? { backfill } : {}),
		...(typeof staticData.backfillStep === 'number' ? { backfillStep: staticData.backfillStep } : {}),
	};
}

const stepOf = (state: ProposalTriggerState) => state.backfillStep ?? 0;

/**
 * Whether a stored state is behind another: an earlier watermark, or the same time without every
 * proposal the other took there (the service's times are milliseconds: a change can share one with
 * the activation's starting point), or fewer backfill steps (a poll that handed on only history).
 */
export function isOlderProposalState(stored: ProposalTriggerState | undefined, than: ProposalTriggerState): boolean {
	if (!stored) return true;
	const order = compareMarks(stored.watermark, than.watermark);
	return order < 0 || (order === 0 && (than.watermark.uids.some((uid) => !stored.watermark.uids.includes(uid)) || stepOf(stored) < stepOf(than)));
}

/**
 * What to store after a poll: its state, unless a later watermark is already stored (another poll
 * overlapped and finished first). The stored watermark never moves backwards; at the same time the
 * uids taken there are united.
 */
export function mergeWithStored(stored: ProposalTriggerState | undefined, polled: ProposalTriggerState): ProposalTriggerState {
	if (!stored) return polled;
	const backfillOf = stepOf(stored) > stepOf(polled) ? stored : polled;
	const backfill = {
		...(backfillOf.backfill ? { backfill: backfillOf.backfill } : {}),
		...(backfillOf.backfillStep !== undefined ? { backfillStep: backfillOf.backfillStep } : {}),
	};
	const liveSince = stored.liveSince ?? polled.liveSince;
	const live = liveSince ? { liveSince } : {};
	const order = compareMarks(stored.watermark, polled.watermark);
	if (order > 0) return { watermark: stored.watermark, ...(stored.pending ? { pending: stored.pending } : {}), ...live, ...backfill };
	if (order < 0) return { watermark: polled.watermark, ...(polled.pending ? { pending: polled.pending } : {}), ...live, ...backfill };
	const watermark = higherMark(stored.watermark, polled.watermark);
	return { watermark, ...(polled.pending ? { pending: polled.pending } : {}), ...live, ...backfill };
}

/** Writes the poll's state into the node's static data, never moving the stored watermark or backfill backwards. */
export function saveProposalState(staticData: IDataObject, polled: ProposalTriggerState): void {
	const state = mergeWithStored(loadProposalState(staticData), polled);
	staticData.watermark = state.watermark as unknown as IDataObject;
	for (const key of ['pending', 'liveSince', 'backfill', 'backfillStep'] as const) {
		if (state[key] !== undefined) staticData[key] = state[key] as unknown as IDataObject;
		else delete staticData[key];
	}
}
