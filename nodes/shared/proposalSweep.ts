/**
 * One sweep of the proposal list (GET /v1/agency/proposals), as the spec's `updatedSince` rules 1 to 5
 * describe it: the Proposal Trigger's changes and the Message Trigger's index of rooms' proposals both
 * read the list through here.
 */
import type { IDataObject, IPollFunctions } from 'n8n-workflow';

import { readListFrom } from './pagination';
import { agencyInboxApiRequest } from './serviceClient';

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

/**
 * GET /v1/agency/proposals through the request pipeline. The spec names no page-size parameter there:
 * `pageSize`, where given, is sent for economy and dropped if the service refuses it.
 */
export function proposalPageFetcher(context: IPollFunctions, pageSize?: string): FetchProposalPage {
	return async (query) =>
		(await agencyInboxApiRequest.call(context, 'GET', '/v1/agency/proposals', {
			qs: query as unknown as IDataObject,
			...(pageSize !== undefined ? { optionalQs: { pageSize } } : {}),
		})) as unknown as ProposalPage;
}

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

/** One sweep of GET /v1/agency/proposals (with `updatedSince`: newest change first), through every page or until told to stop. */
export async function sweepProposals(fetchPage: FetchProposalPage, options: SweepOptions): Promise<SweepResult> {
	const records: ProposalRecord[] = [];
	let requests = 0;
	let total: number | undefined;
	const fetchSweepPage = async (pageCursor: string | undefined): Promise<ProposalPage> => {
		requests++;
		return await fetchPage({
			...(options.updatedSince !== undefined ? { updatedSince: options.updatedSince } : {}),
			...(options.status ? { status: options.status } : {}),
			...(pageCursor !== undefined ? { pageCursor } : {}),
		});
	};
	// Rows read before a restart stay: the restart reads the top of the ordering again (spec rule 2).
	return await readListFrom(fetchSweepPage, options.startCursor, async (pages, restarts) => {
		const outcome = (complete: boolean, nextCursor?: string): SweepResult => ({
			records,
			complete,
			...(nextCursor !== undefined ? { nextCursor } : {}),
			restarted: restarts > 0,
			requests,
			...(total !== undefined ? { total } : {}),
		});
		for await (const { page, next } of pages) {
			records.push(...(page.data ?? []));
			if (typeof page.meta?.total === 'number') total = page.meta.total;
			if (next !== undefined && !options.canContinue()) return outcome(false, next);
		}
		return outcome(true);
	});
}
