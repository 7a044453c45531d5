import type { ChangeFilters, ChangeReason } from './classify';
import { classifyChange, classifySample, passesFilters } from './classify';
import { pagesOf } from '../shared/pagination';
import type { FetchProposalPage, ProposalRecord } from '../shared/proposalSweep';
import { sweepSinceWatermark } from '../shared/proposalWatermark';
import type { StartDate } from '../shared/startFrom';
import type { ProposalTriggerState } from './state';

export interface ProposalChange extends ChangeReason {
	record: ProposalRecord;
	/** Handed on by the backfill (Start From: A Date), not found by the live polls. */
	backfilled?: boolean;
	/** What the backfill does not hand on, and why (startFrom.ts). */
	backfillNotice?: string;
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

/** One poll: the changes of one sweep from the watermark (nodes/shared/proposalWatermark.ts), classified against it and filtered. */
export async function pollChanges(
	state: ProposalTriggerState,
	fetchPage: FetchProposalPage,
	options: PollOptions,
): Promise<PollOutcome> {
	const sweep = await sweepSinceWatermark(state, fetchPage, { status: options.status, canContinue: options.canContinue });
	const changes = sweep.records
		.map((record) => ({ record, ...classifyChange(record, state.watermark) }))
		.filter((change) => passesFilters(change, options));
	const { liveSince, backfill, backfillStep } = state;
	const kept = { ...(liveSince ? { liveSince } : {}), ...(backfill ? { backfill } : {}), ...(backfillStep !== undefined ? { backfillStep } : {}) };
	return { state: { ...sweep.state, ...kept }, changes, requests: sweep.requests };
}

/**
 * Fetch Test Event: the most recently updated proposal that passes the filters; state is not touched.
 * With Start From's date: the first one updated since it, as the backfill hands it on.
 */
export async function findSampleChange(
	fetchPage: FetchProposalPage,
	options: ChangeFilters & { status?: string },
	startDate?: StartDate,
): Promise<ProposalChange | undefined> {
	const pages = pagesOf(async (pageCursor) =>
		await fetchPage({ updatedSince: startDate?.iso ?? BEGINNING_OF_TIME, ...(options.status ? { status: options.status } : {}), ...(pageCursor ? { pageCursor } : {}) }),
	);
	let pagesRead = 0;
	for await (const { page } of pages) {
		for (const record of page.data ?? []) {
			const reason = startDate ? classifyChange(record, { at: startDate.iso, uids: [] }) : classifySample(record);
			const change = { record, ...reason, ...(startDate ? { backfilled: true } : {}) };
			if (passesFilters(change, options)) return change;
		}
		if (++pagesRead === SAMPLE_PAGES) break;
	}
	return undefined;
}
