import { nextCursorToFollow } from '../shared/pagination';
import type { FetchProposalPage, ProposalPage, ProposalRecord } from './types';

/** A cursor from another ordering is rejected once per sweep at most; more restarts mean something else is wrong. */
const MAX_STALE_CURSOR_RESTARTS = 2;

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

/** Spec rule 2: a cursor issued for another ordering (or filter) is answered with 400. */
export function isStaleCursorError(error: unknown): boolean {
	const failure = error as { httpCode?: string | number | null; status?: number } | undefined;
	return String(failure?.httpCode ?? failure?.status ?? '') === '400';
}

/** The page, or the failure to decide on (restart or pass on). */
async function settle(request: Promise<ProposalPage>): Promise<{ page: ProposalPage } | { failure: unknown }> {
	return await request.then(
		(page) => ({ page }),
		(failure: unknown) => ({ failure }),
	);
}

/** One sweep of GET /v1/agency/proposals?updatedSince=…, newest change first, through every page. */
export async function sweepProposals(fetchPage: FetchProposalPage, options: SweepOptions): Promise<SweepResult> {
	const records: ProposalRecord[] = [];
	const usedCursors = new Set<string>();
	let cursor = options.startCursor;
	let restarts = 0;
	let requests = 0;
	for (;;) {
		if (requests > 0 && cursor !== undefined && !options.canContinue()) {
			return { records, complete: false, nextCursor: cursor, restarted: restarts > 0, requests };
		}
		requests++;
		const answer = await settle(
			fetchPage({
				updatedSince: options.updatedSince,
				...(options.status ? { status: options.status } : {}),
				...(cursor !== undefined ? { pageCursor: cursor } : {}),
			}),
		);
		if ('failure' in answer) {
			// Spec rule 2: pagination restarts without pageCursor. A 400 without a cursor is a real error,
			// passed on as the pipeline made it (a NodeApiError with the service's detail).
			if (cursor === undefined || !isStaleCursorError(answer.failure) || restarts >= MAX_STALE_CURSOR_RESTARTS) {
				throw answer.failure;
			}
			restarts++;
			cursor = undefined;
			usedCursors.clear();
			continue;
		}
		const { page } = answer;
		records.push(...page.data);
		const next = nextCursorToFollow(page, usedCursors);
		if (next === undefined) return { records, complete: true, restarted: restarts > 0, requests };
		usedCursors.add(next);
		cursor = next;
	}
}
