import type { ChangeFilters, ChangeReason } from './classify';
import { classifyChange, classifySample, passesFilters } from './classify';
import { sweepProposals } from './sweep';
import type { FetchProposalPage, ProposalRecord } from './types';
import type { Mark } from '../shared/marks';
import { higherMark, isAtOrAbove, isAtOrBelow, lowerMark, timeOf } from '../shared/marks';
import { pagesOf } from '../shared/pagination';
import type { ProposalTriggerState } from './state';

export interface ProposalChange extends ChangeReason {
	record: ProposalRecord;
}

export interface PollOptions extends ChangeFilters {
	status?: string;
	canContinue: () => boolean;
}

export interface PollOutcome {
	state: ProposalTriggerState;
	/** Changes that pass the filters, oldest change first. */
	changes: ProposalChange[];
	requests: number;
}

/** Fetch Test Event looks this far down the updatedAt ordering for a matching proposal. */
const SAMPLE_PAGES = 5;

/** Before every real timestamp: with it, the list is in updatedAt-desc order over all proposals that have one. */
const BEGINNING_OF_TIME = '1970-01-01T00:00:00.000Z';

function byUpdatedAtAscending(a: ProposalRecord, b: ProposalRecord): number {
	return timeOf(a.proposal.updatedAt!) - timeOf(b.proposal.updatedAt!);
}

/**
 * One poll: sweep from the watermark (or resume a sweep that ran out of time), drop what earlier polls
 * took, and advance the watermark to the highest updatedAt received (spec rule 5), only once the sweep
 * is complete: the ordering is newest first, so the unread pages of an unfinished sweep are older.
 * A proposal updated while the sweep pages is skipped by it (rule 4) but gets an updatedAt above every
 * row of this sweep, so the next sweep, which starts at this sweep's highest updatedAt, catches it.
 */
export async function pollChanges(
	state: ProposalTriggerState,
	fetchPage: FetchProposalPage,
	options: PollOptions,
): Promise<PollOutcome> {
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
		// The inclusive boundary repeats rows earlier polls emitted.
		if (isAtOrBelow(previous, uid, updatedAt)) continue;
		// A resumed sweep that had to restart: rows at or above its floor were emitted by the polls that
		// began it, or changed since and belong to the next sweep (their updatedAt is above its top).
		if (floor && pending && isAtOrAbove(floor, uid, updatedAt)) continue;
		const mark: Mark = { at: updatedAt, uids: [uid] };
		top = higherMark(top, mark);
		floor = lowerMark(floor, mark);
		const kept = newestPerProposal.get(uid);
		if (!kept || timeOf(updatedAt) > timeOf(kept.proposal.updatedAt!)) newestPerProposal.set(uid, record);
	}
	const changes = [...newestPerProposal.values()]
		.sort(byUpdatedAtAscending)
		.map((record) => ({ record, ...classifyChange(record, previous) }))
		.filter((change) => passesFilters(change, options));
	const nextState: ProposalTriggerState = sweep.complete
		? { watermark: top ? higherMark(previous, top) : previous }
		: { watermark: previous, pending: { cursor: sweep.nextCursor!, top, floor } };
	return { state: nextState, changes, requests: sweep.requests };
}

/** Fetch Test Event: the most recently updated proposal that passes the filters; state is not touched. */
export async function findSampleChange(
	fetchPage: FetchProposalPage,
	options: ChangeFilters & { status?: string },
): Promise<ProposalChange | undefined> {
	const pages = pagesOf(async (pageCursor) =>
		await fetchPage({ updatedSince: BEGINNING_OF_TIME, ...(options.status ? { status: options.status } : {}), ...(pageCursor ? { pageCursor } : {}) }),
	);
	let pagesRead = 0;
	for await (const { page } of pages) {
		for (const record of page.data ?? []) {
			const change = { record, ...classifySample(record) };
			if (passesFilters(change, options)) return change;
		}
		if (++pagesRead === SAMPLE_PAGES) break;
	}
	return undefined;
}
