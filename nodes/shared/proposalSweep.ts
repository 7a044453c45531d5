/**
 * One sweep of the proposal list (GET /v1/agency/proposals), as the spec's `updatedSince` rules 1 to 5
 * describe it: the Proposal Trigger's changes and the Message Trigger's index of rooms' proposals both
 * read the list through here.
 */
import type { IDataObject } from 'n8n-workflow';

import { pagesOf } from './pagination';

/** The fields of a proposal record the triggers read; the rest is passed through untouched. */
export interface ProposalRecord extends IDataObject {
	proposal: IDataObject & {
		uid: string;
		createdAt: string;
		updatedAt: string | null;
		status?: string;
		results?: Array<{ timeStamp: string; type: string }>;
		chatRoomId?: string | null;
	};
	freelancer?: IDataObject & { uid?: string; name?: string };
}

export interface ProposalPage {
	data: ProposalRecord[];
	meta?: { nextCursor?: string | null; total?: number };
}

export interface ProposalQuery {
	/** Absent: the whole list, ordered by createdAt (rule 3: the only way to proposals whose updatedAt is null). */
	updatedSince?: string;
	status?: string;
	pageCursor?: string;
}

/** One GET /v1/agency/proposals through the package's request pipeline. */
export type FetchProposalPage = (query: ProposalQuery) => Promise<ProposalPage>;

/** A cursor from another ordering is rejected once per sweep at most; more restarts mean something else is wrong. */
const MAX_STALE_CURSOR_RESTARTS = 2;

export interface SweepOptions {
	/** Absent: a full pass over the list (the bootstrap of rule 5). */
	updatedSince?: string;
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
	/** `meta.total` of the last page read, where the service sent it. */
	total?: number;
}

/** Spec rule 2: a cursor issued for another ordering (or filter) is answered with 400. */
export function isStaleCursorError(error: unknown): boolean {
	const failure = error as { httpCode?: string | number | null; status?: number } | undefined;
	return String(failure?.httpCode ?? failure?.status ?? '') === '400';
}

/** One sweep of GET /v1/agency/proposals (with `updatedSince`: newest change first), through every page or until told to stop. */
export async function sweepProposals(fetchPage: FetchProposalPage, options: SweepOptions): Promise<SweepResult> {
	const records: ProposalRecord[] = [];
	let restarts = 0;
	let requests = 0;
	let total: number | undefined;
	let cursorSent: string | undefined;
	const fetchSweepPage = async (pageCursor: string | undefined): Promise<ProposalPage> => {
		requests++;
		cursorSent = pageCursor;
		return await fetchPage({
			...(options.updatedSince !== undefined ? { updatedSince: options.updatedSince } : {}),
			...(options.status ? { status: options.status } : {}),
			...(pageCursor !== undefined ? { pageCursor } : {}),
		});
	};
	const outcome = (complete: boolean, nextCursor?: string): SweepResult => ({
		records,
		complete,
		...(nextCursor !== undefined ? { nextCursor } : {}),
		restarted: restarts > 0,
		requests,
		...(total !== undefined ? { total } : {}),
	});
	/** Reads from `startCursor` to the end of the ordering, or until the poll's time is up. */
	const readPages = async (startCursor: string | undefined): Promise<SweepResult> => {
		for await (const { page, next } of pagesOf(fetchSweepPage, startCursor)) {
			records.push(...(page.data ?? []));
			if (typeof page.meta?.total === 'number') total = page.meta.total;
			if (next !== undefined && !options.canContinue()) return outcome(false, next);
		}
		return outcome(true);
	};
	let startCursor = options.startCursor;
	for (;;) {
		const read = await readPages(startCursor).then(
			(result) => ({ result }),
			(failure: unknown) => ({ failure }),
		);
		if ('result' in read) return read.result;
		// Spec rule 2: pagination restarts without pageCursor. A 400 without a cursor is a real error,
		// passed on as the pipeline made it (a NodeApiError with the service's detail).
		if (cursorSent === undefined || !isStaleCursorError(read.failure) || restarts >= MAX_STALE_CURSOR_RESTARTS) throw read.failure;
		restarts++;
		startCursor = undefined;
	}
}
