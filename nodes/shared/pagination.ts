import type { IDataObject } from 'n8n-workflow';

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
