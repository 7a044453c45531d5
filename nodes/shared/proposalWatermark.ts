/**
 * Where a reader of the proposal list stands in the `updatedSince` procedure (spec rules 4 and 5): the
 * highest `updatedAt` received (never the clock, but for the bootstrap value) and a sweep that ran out
 * of poll time. The Proposal Trigger and the Message Trigger's index of rooms' proposals both keep one.
 */
import type { Mark } from './marks';
import { higherMark, isAtOrAbove, isAtOrBelow, isMark, lowerMark, timeOf } from './marks';
import type { FetchProposalPage, ProposalRecord } from './proposalSweep';
import { sweepProposals } from './proposalSweep';

/** A sweep that ran out of poll time: where to resume and which part of the ordering it already took. */
export interface PendingSweep {
	cursor: string;
	/** The highest row taken so far: the next watermark once the sweep completes. */
	top?: Mark;
	/** The lowest row taken so far: everything at or above it was taken (or is newer, for the next sweep). */
	floor?: Mark;
}

export interface WatermarkState {
	/** Highest `updatedAt` received from the service (never the clock, except the bootstrap value). */
	watermark: Mark;
	pending?: PendingSweep;
}

export function isPendingSweep(value: unknown): value is PendingSweep {
	const pending = value as PendingSweep | undefined;
	return (
		typeof pending?.cursor === 'string' &&
		(pending.top === undefined || isMark(pending.top)) &&
		(pending.floor === undefined || isMark(pending.floor))
	);
}

/** A stored watermark state, checked; undefined when it is not one. */
export function watermarkStateFrom(value: unknown): WatermarkState | undefined {
	const stored = value as Partial<WatermarkState> | undefined;
	if (!isMark(stored?.watermark)) return undefined;
	return isPendingSweep(stored.pending) ? { watermark: stored.watermark, pending: stored.pending } : { watermark: stored.watermark };
}

export interface WatermarkSweep {
	/** The newest row of each proposal changed after the watermark, oldest change first. */
	records: ProposalRecord[];
	state: WatermarkState;
	/** Whether the sweep reached the watermark: every change up to its start was read. */
	complete: boolean;
	requests: number;
}

function byUpdatedAtAscending(a: ProposalRecord, b: ProposalRecord): number {
	return timeOf(a.proposal.updatedAt!) - timeOf(b.proposal.updatedAt!);
}

/**
 * One sweep from the watermark (or the resumption of one that ran out of time): drops what earlier
 * sweeps took, and advances the watermark to the highest updatedAt received (rule 5), only once the
 * sweep is complete: the ordering is newest first, so the unread pages of an unfinished sweep are older.
 * A proposal updated while the sweep pages is skipped by it (rule 4) but gets an updatedAt above every
 * row of this sweep, so the next sweep, which starts at this sweep's highest updatedAt, catches it.
 */
export async function sweepSinceWatermark(
	state: WatermarkState,
	fetchPage: FetchProposalPage,
	options: { status?: string; canContinue: () => boolean },
): Promise<WatermarkSweep> {
	const previous = state.watermark;
	const pending = state.pending;
	const sweep = await sweepProposals(fetchPage, {
		updatedSince: previous.at,
		status: options.status,
		startCursor: pending?.cursor,
		canContinue: options.canContinue,
	});
	let top = pending?.top;
	let floor = pending?.floor;
	const newestPerProposal = new Map<string, ProposalRecord>();
	for (const record of sweep.records) {
		const { uid, updatedAt } = record.proposal;
		if (!updatedAt || Number.isNaN(timeOf(updatedAt))) continue;
		// The inclusive boundary repeats rows earlier sweeps took.
		if (isAtOrBelow(previous, uid, updatedAt)) continue;
		// A resumed sweep that had to restart: rows at or above its floor were taken by the polls that
		// began it, or changed since and belong to the next sweep (their updatedAt is above its top).
		if (floor && pending && isAtOrAbove(floor, uid, updatedAt)) continue;
		const mark: Mark = { at: updatedAt, uids: [uid] };
		top = higherMark(top, mark);
		floor = lowerMark(floor, mark);
		const kept = newestPerProposal.get(uid);
		if (!kept || timeOf(updatedAt) > timeOf(kept.proposal.updatedAt!)) newestPerProposal.set(uid, record);
	}
	const nextState: WatermarkState = sweep.complete
		? { watermark: top ? higherMark(previous, top) : previous }
		: { watermark: previous, pending: { cursor: sweep.nextCursor!, top, floor } };
	return { records: [...newestPerProposal.values()].sort(byUpdatedAtAscending), state: nextState, complete: sweep.complete, requests: sweep.requests };
}
