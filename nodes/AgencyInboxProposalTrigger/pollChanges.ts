import type { ChangeFilters, ChangeReason } from './classify';
import { classifyChange, classifySample, passesFilters } from './classify';
import { pagesOf } from '../shared/pagination';
import type { FetchProposalPage, ProposalRecord } from '../shared/proposalSweep';
import { sweepSinceWatermark } from '../shared/proposalWatermark';
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
	return { state: sweep.state, changes, requests: sweep.requests };
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
