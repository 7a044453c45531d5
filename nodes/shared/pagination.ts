import type { IDataObject } from 'n8n-workflow';

import { httpStatusOf } from './errors';

/** The service's answer: one record, or one page of a list. */
export interface Envelope {
	data?: IDataObject | IDataObject[];
	meta?: { pageSize?: number; nextCursor?: string; total?: number };
}

/** What the page iterator reads of an answer: its records and `meta.nextCursor`. */
export interface ListPage {
	data?: unknown;
	meta?: { nextCursor?: string | null };
}

/** Fetches the page that starts at the cursor (no cursor: the first page). */
export type FetchPage<Page extends ListPage = Envelope> = (pageCursor: string | undefined) => Promise<Page>;

export interface PageRead<Page> {
	page: Page;
	/** The cursor of the page after this one; undefined when the list ends here. */
	next: string | undefined;
}

/**
 * The cursor to follow after this page, or undefined when the list ends: a missing or empty cursor,
 * an empty page, or a cursor already followed (a service answering one cursor again would loop).
 */
function nextCursorOf(page: ListPage, cursorsUsed: ReadonlySet<string>): string | undefined {
	if (!Array.isArray(page.data) || page.data.length === 0) return undefined;
	const cursor = page.meta?.nextCursor;
	if (typeof cursor !== 'string' || cursor === '' || cursorsUsed.has(cursor)) return undefined;
	return cursor;
}

/**
 * The one page iterator of the package: the pages of a list from `startCursor` (none: the first
 * page), following meta.nextCursor through pageCursor until the list ends by the rule above. A reader
 * that stops early (out of time, or it has what it needs) finds in `next` of the last page where the
 * list goes on. Each page is fetched only when the reader asks for it.
 */
export async function* pagesOf<Page extends ListPage>(fetchPage: FetchPage<Page>, startCursor?: string): AsyncGenerator<PageRead<Page>, void, undefined> {
	const cursorsUsed = new Set<string>(startCursor === undefined ? [] : [startCursor]);
	let cursor = startCursor;
	do {
		const page = await fetchPage(cursor);
		const next = nextCursorOf(page, cursorsUsed);
		if (next !== undefined) cursorsUsed.add(next);
		yield { page, next };
		cursor = next;
	} while (cursor !== undefined);
}

/** A refused cursor restarts a read at most this often; more refusals mean something else is wrong. */
const MAX_STALE_CURSOR_RESTARTS = 2;

/**
 * Reads a list from `startCursor` (a cursor saved by an earlier poll; none: the top) with `read`, which
 * pages through `pages` and may stop early. A 400 to a request that carried a cursor (spec rule 2: a
 * cursor issued for another ordering or filter, or one the service no longer takes) starts the read
 * again from the top, with `restarts` counting such restarts; a 400 to a request without a cursor, and
 * any other failure, is passed on as the pipeline made it.
 */
export async function readListFrom<Page extends ListPage, Read>(
	fetchPage: FetchPage<Page>,
	startCursor: string | undefined,
	read: (pages: AsyncGenerator<PageRead<Page>, void, undefined>, restarts: number) => Promise<Read>,
): Promise<Read> {
	let cursorSent: string | undefined;
	const fetchNotingCursor: FetchPage<Page> = async (pageCursor) => {
		cursorSent = pageCursor;
		return await fetchPage(pageCursor);
	};
	for (let restarts = 0, cursor = startCursor; ; restarts++, cursor = undefined) {
		const outcome = await read(pagesOf(fetchNotingCursor, cursor), restarts).then(
			(result) => ({ result }),
			(failure: unknown) => ({ failure }),
		);
		if ('result' in outcome) return outcome.result;
		if (cursorSent === undefined || httpStatusOf(outcome.failure) !== 400 || restarts >= MAX_STALE_CURSOR_RESTARTS) throw outcome.failure;
	}
}

/**
 * Every record of a list up to `limit`, asking for no page past it. A single-record answer
 * ({data: {...}}) yields that record.
 */
export async function collectRecords(fetchPage: FetchPage, limit = Infinity): Promise<IDataObject[]> {
	const records: IDataObject[] = [];
	for await (const { page } of pagesOf(fetchPage)) {
		if (!Array.isArray(page.data)) return page.data === undefined ? [] : [page.data];
		records.push(...page.data.slice(0, limit - records.length));
		if (records.length >= limit) break;
	}
	return records;
}
