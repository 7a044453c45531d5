import type { IDataObject } from 'n8n-workflow';

/** The service's answer: one record, or one page of a list. */
export interface Envelope {
	data?: IDataObject | IDataObject[];
	meta?: { pageSize?: number; nextCursor?: string; total?: number };
}

/** Fetches the page that starts at the cursor (no cursor: the first page). */
export type FetchPage = (pageCursor: string | undefined) => Promise<Envelope>;

/**
 * The cursor to follow after this page, or undefined when paging must stop: on a missing, empty or
 * repeated cursor, or an empty page. Every paging loop of the package stops by this rule.
 */
export function nextCursorToFollow(
	page: { data?: unknown; meta?: { nextCursor?: string | null } },
	cursorsUsed: ReadonlySet<string>,
): string | undefined {
	const records = page.data;
	if (!Array.isArray(records) || records.length === 0) return undefined;
	const cursor = page.meta?.nextCursor;
	if (typeof cursor !== 'string' || cursor === '' || cursorsUsed.has(cursor)) return undefined;
	return cursor;
}

/**
 * Every record of a list up to `limit`, following meta.nextCursor through pageCursor. Stops on a
 * missing, empty or repeated cursor, an empty page, or once the limit is reached (no extra request).
 * A single-record answer ({data: {...}}) yields that record.
 */
export async function collectRecords(fetchPage: FetchPage, limit = Infinity): Promise<IDataObject[]> {
	const records: IDataObject[] = [];
	const cursorsUsed = new Set<string>();
	let cursor: string | undefined;
	do {
		const page = await fetchPage(cursor);
		if (!Array.isArray(page.data)) return page.data === undefined ? [] : [page.data];
		for (const record of page.data) {
			if (records.length >= limit) break;
			records.push(record);
		}
		if (records.length >= limit) break;
		cursor = nextCursorToFollow(page, cursorsUsed);
		if (cursor !== undefined) cursorsUsed.add(cursor);
	} while (cursor !== undefined);
	return records;
}
