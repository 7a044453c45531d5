import { readListFrom } from '../shared/pagination';
import type { FetchProposalPage, ProposalPage, ProposalRecord } from './types';

export interface SweepOptions {
	updatedSince: string;
	status?: string;
	/** Resume a sweep that ran out of poll time. */
	startCursor?: string;
	/** Asked before every page after the first: false stops the sweep, to be resumed at `nextCursor`. */
	canContinue: () => boolean;
}

export interface SweepResult {
	/** Rows in the order received (updatedAt descending per segment; a restart begins a new segment). */
	records: ProposalRecord[];
	complete: boolean;
	/** Where to resume when not complete. */
	nextCursor?: string;
	/** Whether a stale-cursor 400 made the sweep start over from the top of the ordering. */
	restarted: boolean;
	requests: number;
}

/** One sweep of GET /v1/agency/proposals?updatedSince=…, newest change first, through every page. */
export async function sweepProposals(fetchPage: FetchProposalPage, options: SweepOptions): Promise<SweepResult> {
	const records: ProposalRecord[] = [];
	let requests = 0;
	const fetchSweepPage = async (pageCursor: string | undefined): Promise<ProposalPage> => {
		requests++;
		return await fetchPage({
			updatedSince: options.updatedSince,
			...(options.status ? { status: options.status } : {}),
			...(pageCursor !== undefined ? { pageCursor } : {}),
		});
	};
	// Rows read before a restart stay: the restart reads the top of the ordering again (spec rule 2).
	return await readListFrom(fetchSweepPage, options.startCursor, async (pages, restarts) => {
		for await (const { page, next } of pages) {
			records.push(...(page.data ?? []));
			if (next !== undefined && !options.canContinue()) {
				return { records, complete: false, nextCursor: next, restarted: restarts > 0, requests };
			}
		}
		return { records, complete: true, restarted: restarts > 0, requests };
	});
}
