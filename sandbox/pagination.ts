/**
 * Cursor pagination. A cursor is opaque to clients; inside it names the list and the ordering it was
 * issued for, and where the next page begins: by default (`keys`) the sort key of the last row served,
 * so a row that moves above the cursor (e.g. a proposal updated mid-sweep) is skipped instead of
 * shifting the pages; under the reading `listCursors=offsets`, the number of rows served, so a row that
 * moves shifts the rows after it (one served twice, or one skipped).
 */
import { BadRequest } from './http';

export type SortKey = [string, string];

export interface Ordering<T> {
	/** Identifies list + ordering (+ filters bound to the cursor), e.g. 'proposals:updatedAt-desc:status=active'. */
	binding: string;
	/** Human description used in the 400 detail, e.g. 'updatedAt descending (with updatedSince)'. */
	description: string;
	key: (item: T) => SortKey;
	descending: boolean;
}

export type CursorKind = 'keys' | 'offsets';

interface CursorPayload {
	b: string;
	d: string;
	/** The last row's key (`keys`), or the rows served (`offsets`). */
	k?: SortKey;
	o?: number;
}

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

export function encodeCursor(payload: CursorPayload): string {
	return Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): CursorPayload {
	try {
		const payload = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as CursorPayload;
		const keyed = Array.isArray(payload.k) && payload.k.length === 2;
		const counted = Number.isInteger(payload.o) && payload.o! >= 0;
		if (typeof payload.b === 'string' && keyed !== counted) return payload;
	} catch {
		// falls through to the error below
	}
	throw new BadRequest('pageCursor is not a valid cursor. Restart pagination without pageCursor.');
}

function compareKeys(a: SortKey, b: SortKey): number {
	if (a[0] !== b[0]) return a[0] < b[0] ? -1 : 1;
	if (a[1] !== b[1]) return a[1] < b[1] ? -1 : 1;
	return 0;
}

export function parsePageSize(raw: string | undefined, defaultSize: number, maxSize = MAX_PAGE_SIZE): number {
	if (raw === undefined || raw === '') return Math.min(defaultSize, maxSize);
	if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new BadRequest(`pageSize must be a positive integer (got "${raw}").`);
	return Math.min(Number(raw), maxSize);
}

export interface Page<T> {
	data: T[];
	meta: { pageSize: number; nextCursor?: string; total?: number };
}

/** Sorts `items` by `ordering`, resumes where the cursor says, and cuts one page. */
export function paginate<T>(items: T[], ordering: Ordering<T>, cursor: string | undefined, pageSize: number, cursors: CursorKind = 'keys'): Page<T> {
	const direction = ordering.descending ? -1 : 1;
	const sorted = items
		.map((item) => ({ item, key: ordering.key(item) }))
		.sort((a, b) => direction * compareKeys(a.key, b.key));
	let start = 0;
	if (cursor !== undefined && cursor !== '') {
		const decoded = decodeCursor(cursor);
		if (decoded.b !== ordering.binding) {
			throw new BadRequest(
				`pageCursor was issued for a different ordering or filter (${decoded.d}) than this request uses (${ordering.description}). ` +
					'A cursor belongs to the ordering it was issued for: restart pagination without pageCursor.',
			);
		}
		if ((decoded.o !== undefined) !== (cursors === 'offsets')) throw new BadRequest('pageCursor is not a valid cursor. Restart pagination without pageCursor.');
		if (decoded.o !== undefined) start = Math.min(decoded.o, sorted.length);
		else {
			const after = decoded.k!;
			const firstAfter = sorted.findIndex((row) => direction * compareKeys(row.key, after) > 0);
			start = firstAfter === -1 ? sorted.length : firstAfter;
		}
	}
	const rows = sorted.slice(start, start + pageSize);
	const page: Page<T> = { data: rows.map((r) => r.item), meta: { pageSize: rows.length } };
	if (start + pageSize < sorted.length && rows.length > 0) {
		const next = cursors === 'offsets' ? { o: start + rows.length } : { k: rows[rows.length - 1].key };
		page.meta.nextCursor = encodeCursor({ b: ordering.binding, d: ordering.description, ...next });
	}
	return page;
}
