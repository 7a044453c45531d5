import { pagesOf } from '../shared/pagination';
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

/** One sweep of GET /v1/agency/proposals?updatedSince=…, newest change first, through every page. */
export async function sweepProposals(fetchPage: FetchProposalPage, options: SweepOptions): Promise<SweepResult> {
	const records: ProposalRecord[] = [];
	let restarts = 0;
	let requests = 0;
	let cursorSent: string | undefined;
	const fetchSweepPage = async (pageCursor: string | undefined): Promise<ProposalPage> => {
		requests++;
		cursorSent = pageCursor;
		return await fetchPage({
			updatedSince: options.updatedSince,
			...(options.status ? { status: options.status } : {}),
			...(pageCursor !== undefined ? { pageCursor } : {}),
		});
	};
	/** Reads from `startCursor` to the end of the ordering, or until the poll's time is up. */
	const readPages = async (startCursor: string | undefined): Promise<SweepResult> => {
		for await (const { page, next } of pagesOf(fetchSweepPage, startCursor)) {
			records.push(...(page.data ?? []));
			if (next !== undefined && !options.canContinue()) {
				return { records, complete: false, nextCursor: next, restarted: restarts > 0, requests };
			}
		}
		return { records, complete: true, restarted: restarts > 0, requests };
	};
	let startCursor = options.startCursor;
	for (;;) {
		const outcome = await readPages(startCursor).then(
			(result) => ({ result }),
			(failure: unknown) => ({ failure }),
		);
		if ('result' in outcome) return outcome.result;
		// Spec rule 2: pagination restarts without pageCursor. A 400 without a cursor is a real error,
		// passed on as the pipeline made it (a NodeApiError with the service's detail).
		if (cursorSent === undefined || !isStaleCursorError(outcome.failure) || restarts >= MAX_STALE_CURSOR_RESTARTS) throw outcome.failure;
		restarts++;
		startCursor = undefined;
	}
}
