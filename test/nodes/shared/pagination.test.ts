import { startSandbox, type Sandbox } from '../../../sandbox';
import type { Envelope, ListPage } from '../../../nodes/shared/pagination';
import { collectRecords, pagesOf } from '../../../nodes/shared/pagination';

/** A list served from memory: page i answers cursor `c<i>`; every cursor asked for is recorded. */
function listOf(pages: Envelope[]) {
	const cursorsAsked: Array<string | undefined> = [];
	const fetchPage = async (cursor: string | undefined) => {
		cursorsAsked.push(cursor);
		return pages[cursor === undefined ? 0 : Number(cursor.replace('c', ''))];
	};
	return { fetchPage, cursorsAsked };
}

const page = (ids: number[], nextCursor?: string): Envelope => ({
	data: ids.map((id) => ({ id })),
	meta: nextCursor === undefined ? { pageSize: ids.length } : { pageSize: ids.length, nextCursor },
});

async function readAll<Page extends ListPage>(pages: AsyncIterable<{ page: Page; next: string | undefined }>) {
	const read: Array<{ page: Page; next: string | undefined }> = [];
	for await (const pageRead of pages) read.push(pageRead);
	return read;
}

describe('pagesOf, the page iterator of every list reader', () => {
	const threePages = [page([1, 2], 'c1'), page([3, 4], 'c2'), page([5])];

	it('follows nextCursor through pageCursor until the cursor is missing, telling each page where the list goes on', async () => {
		const { fetchPage, cursorsAsked } = listOf(threePages);
		const read = await readAll(pagesOf(fetchPage));
		expect(read.map(({ next }) => next)).toEqual(['c1', 'c2', undefined]);
		expect(cursorsAsked).toEqual([undefined, 'c1', 'c2']);
	});

	it('ends on an empty cursor, an empty page, a repeated cursor and a cursor pointing back to the start', async () => {
		const emptyCursor = listOf([page([1], '')]);
		expect(await readAll(pagesOf(emptyCursor.fetchPage))).toHaveLength(1);
		const emptyPage = listOf([page([1], 'c1'), page([], 'c2'), page([3])]);
		expect((await readAll(pagesOf(emptyPage.fetchPage))).map(({ next }) => next)).toEqual(['c1', undefined]);
		expect(emptyPage.cursorsAsked).toEqual([undefined, 'c1']);
		const repeated = listOf([page([1], 'c1'), page([2], 'c2'), page([3], 'c1')]);
		expect(await readAll(pagesOf(repeated.fetchPage))).toHaveLength(3);
		expect(repeated.cursorsAsked).toEqual([undefined, 'c1', 'c2']);
		const backToStart = listOf([page([1], 'c1'), page([2], 'c2'), page([3], 'c1')]);
		expect(await readAll(pagesOf(backToStart.fetchPage, 'c1'))).toHaveLength(2);
		expect(backToStart.cursorsAsked).toEqual(['c1', 'c2']);
	});

	it('fetches a page only when the reader asks for it, so a reader that stops early resumes at `next`', async () => {
		const { fetchPage, cursorsAsked } = listOf(threePages);
		let resumeAt: string | undefined;
		for await (const { next } of pagesOf(fetchPage)) {
			resumeAt = next;
			break;
		}
		expect(cursorsAsked).toEqual([undefined]);
		const rest = await readAll(pagesOf(fetchPage, resumeAt));
		expect(rest.flatMap(({ page: { data } }) => (data as Array<{ id: number }>).map(({ id }) => id))).toEqual([3, 4, 5]);
	});

	it('passes a failure of a page on to the reader, after the pages before it', async () => {
		const fetchPage = async (cursor: string | undefined) => {
			if (cursor === 'c1') throw new Error('400 cursor issued for another ordering');
			return page([1], 'c1');
		};
		const read: number[] = [];
		await expect(
			(async () => {
				for await (const { page: current } of pagesOf(fetchPage)) read.push((current.data as unknown[]).length);
			})(),
		).rejects.toThrow('another ordering');
		expect(read).toEqual([1]);
	});

	describe('over the sandbox (HTTP on loopback)', () => {
		let sandbox: Sandbox;
		beforeAll(async () => {
			sandbox = await startSandbox({ requestsPerMinute: 0 });
		});
		afterAll(async () => await sandbox.close());

		it("reads every room once, 7 to a page, ending where the service's cursors end", async () => {
			const fetchRooms = async (pageCursor: string | undefined) => {
				const query = new URLSearchParams({ pageSize: '7', ...(pageCursor ? { pageCursor } : {}) });
				const response = await fetch(`${sandbox.url}/v1/master-inbox/rooms?${query}`, { headers: { authorization: `Bearer ${sandbox.apiKey}` } });
				return (await response.json()) as { data: Array<{ roomId: string }>; meta: { nextCursor?: string } };
			};
			const read = await readAll(pagesOf(fetchRooms));
			const roomIds = read.flatMap(({ page: current }) => current.data.map((room) => room.roomId));
			expect(new Set(roomIds).size).toBe(sandbox.state.rooms.length);
			expect(roomIds).toHaveLength(sandbox.state.rooms.length);
			expect(read).toHaveLength(Math.ceil(sandbox.state.rooms.length / 7));
		});
	});
});

describe('collectRecords (the lists of the action node)', () => {
	const threePages = [page([1, 2], 'c1'), page([3, 4], 'c2'), page([5])];

	it('collects every record of every page', async () => {
		expect((await collectRecords(listOf(threePages).fetchPage)).map((r) => r.id)).toEqual([1, 2, 3, 4, 5]);
	});

	it('stops at the Limit without asking for another page, within or across pages', async () => {
		for (const [limit, requests] of [[1, 1], [2, 1], [3, 2], [4, 2], [9, 3]]) {
			const { fetchPage, cursorsAsked } = listOf(threePages);
			const records = await collectRecords(fetchPage, limit);
			expect(records).toHaveLength(Math.min(limit, 5));
			expect(cursorsAsked).toHaveLength(requests);
		}
	});

	it('answers a single-record envelope with that record', async () => {
		expect(await collectRecords(async () => ({ data: { uid: 'a' } }))).toEqual([{ uid: 'a' }]);
		expect(await collectRecords(async () => ({}))).toEqual([]);
	});
});
