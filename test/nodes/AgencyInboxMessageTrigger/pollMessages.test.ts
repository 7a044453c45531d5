/**
 * The stop rule's pure functions, and cases the sandbox does not produce within one run: a room's row
 * that shows a message its message list does not return yet (a service whose lists are not updated at
 * the same moment), message ids used again (a service whose data was reset, as each `npm start` starts
 * a new sandbox), a state stored by an earlier version, and more rooms than the trigger keeps.
 */
import type { MessageSources } from '../../../nodes/AgencyInboxMessageTrigger/pollMessages';
import { bootstrapMessages } from '../../../nodes/AgencyInboxMessageTrigger/activation';
import { ALL_PAGES_AT_LEAST_EVERY_MS, pollMessages, showsNothingNew } from '../../../nodes/AgencyInboxMessageTrigger/pollMessages';
import { inLastMessageOrder, lastActivityOf, mayStopBelow, otherDatesOf, showsSameTimes } from '../../../nodes/AgencyInboxMessageTrigger/roomListOrder';
import type { MessageTriggerState } from '../../../nodes/AgencyInboxMessageTrigger/state';
import { loadMessageState, MAX_ROOMS_KEPT } from '../../../nodes/AgencyInboxMessageTrigger/state';
import type { RoomRow, StoryRow } from '../../../nodes/AgencyInboxMessageTrigger/types';

/** The sources of a service over a room list and its rooms' messages, where no author is an agency member but `member`. */
function sourcesOver(fetchRooms: MessageSources['fetchRooms'], fetchStories: MessageSources['fetchStories'], now = () => Date.parse(at(0))): MessageSources {
	return { fetchRooms, fetchStories, loadMembers: async () => [{ uid: 'member' }], fetchProposal: async () => undefined, fetchProposalsPage: async () => ({ data: [] }), canContinue: () => true, now };
}

it('a message the room row shows before the message list does arrives once the list shows it', async () => {
	const stories: Record<string, StoryRow[]> = {
		a: [{ storyId: 's1', userId: 'client', message: 'old', createdAt: '2026-01-01T00:00:00.000Z' }],
		b: [{ storyId: 's2', userId: 'client', message: 'old', createdAt: '2026-01-01T00:00:01.000Z' }],
	};
	const rooms: RoomRow[] = [
		{ roomId: 'b', lastStoryId: 's2', lastStoryAt: '2026-01-01T00:00:01.000Z' },
		{ roomId: 'a', lastStoryId: 's1', lastStoryAt: '2026-01-01T00:00:00.000Z' },
	];
	const notListedYet = new Set<string>();
	const sources = sourcesOver(
		async () => ({ data: [...rooms].sort((x, y) => Date.parse(y.lastStoryAt!) - Date.parse(x.lastStoryAt!)) }),
		async (roomId: string) => ({ data: [...stories[roomId]].filter((story) => !notListedYet.has(story.storyId)).reverse() }),
	);
	let state = await bootstrapMessages(sources.fetchRooms, sources.now);
	stories.a.push({ storyId: 's3', userId: 'client', message: 'new', createdAt: '2026-01-01T00:01:00.000Z' });
	rooms[1] = { roomId: 'a', lastStoryId: 's3', lastStoryAt: '2026-01-01T00:01:00.000Z' };
	notListedYet.add('s3');

	const emitted: string[] = [];
	for (let poll = 0; poll < 3; poll++) {
		if (poll === 1) notListedYet.clear();
		const outcome = await pollMessages(state, sources);
		emitted.push(...outcome.messages.map((message) => message.story.storyId));
		state = outcome.state;
	}
	expect(emitted).toEqual(['s3']);
});

it('a room whose row shows the id read last but a later time is read again (message ids used again after a reset)', async () => {
	const stories: Record<string, StoryRow[]> = { a: [{ storyId: 's1', userId: 'client', message: 'old', createdAt: '2026-01-01T00:00:00.000Z' }] };
	const rooms: RoomRow[] = [{ roomId: 'a', lastStoryId: 's1', lastStoryAt: '2026-01-01T00:00:00.000Z' }];
	const sources = sourcesOver(
		async () => ({ data: [...rooms] }),
		async (roomId: string) => ({ data: [...stories[roomId]].reverse() }),
	);
	let state = await bootstrapMessages(sources.fetchRooms, sources.now);
	stories.a.push({ storyId: 's2', userId: 'client', message: 'first run', createdAt: '2026-01-01T00:01:00.000Z' });
	rooms[0] = { roomId: 'a', lastStoryId: 's2', lastStoryAt: '2026-01-01T00:01:00.000Z' };
	let outcome = await pollMessages(state, sources);
	expect(outcome.messages.map((message) => message.story.message)).toEqual(['first run']);
	state = outcome.state;

	// The service is reset to its seed and numbers new messages as before: s2 again, later.
	stories.a = [stories.a[0], { storyId: 's2', userId: 'client', message: 'after the reset', createdAt: '2026-01-01T00:05:00.000Z' }];
	rooms[0] = { roomId: 'a', lastStoryId: 's2', lastStoryAt: '2026-01-01T00:05:00.000Z' };
	outcome = await pollMessages(state, sources);
	expect(outcome.messages.map((message) => message.story.message)).toEqual(['after the reset']);
	// And only once.
	expect((await pollMessages(outcome.state, sources)).messages).toEqual([]);
});

const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 0, minute)).toISOString();
const floorAt = (minute: number) => ({ at: at(minute), uids: [] });

/** A room row as the service sends it; the trigger reads `lastSyncedAt` as one of the row's dates, not by name. */
type ServiceRow = RoomRow & { lastSyncedAt?: string | null };

/** A row with its last message at `last`, created at `created`, synced at `synced` (minutes). */
const row = (roomId: string, last: number | null, more: Partial<Record<'created' | 'synced', number>> = {}): ServiceRow => ({
	roomId,
	lastStoryId: last === null ? null : `${roomId}@${last}`,
	lastStoryAt: last === null ? null : at(last),
	...(more.created === undefined ? {} : { createdAtDateTime: at(more.created) }),
	...(more.synced === undefined ? {} : { lastSyncedAt: at(more.synced) }),
});

describe('what the rows show about the list order (roomListOrder.ts)', () => {
	it('the last message time is the later of lastStoryAt and lastStory.createdDateTime; null without either', () => {
		expect(lastActivityOf({ roomId: 'a', lastStoryAt: at(1), lastStory: { createdDateTime: at(2) } })).toBe(at(2));
		expect(lastActivityOf({ roomId: 'a', lastStoryAt: at(3), lastStory: { createdDateTime: 'not a time' } })).toBe(at(3));
		expect(lastActivityOf({ roomId: 'a', lastStoryAt: null, lastStory: null })).toBeNull();
	});

	it('finds every other date by its shape, on the row and one level down, present on every row; not the last message fields', () => {
		const rows = [
			{ ...row('a', 5, { created: 1, synced: 6 }), contract: { createdDateTime: at(0), title: '2026-01-01' }, blockDateTime: at(2), creator: { user: { seenAt: at(1) } } },
			{ ...row('b', 4, { created: 2, synced: 4 }), contract: { createdDateTime: '2026-01-01T00:00:00+02:00' }, blockDateTime: null },
		] as unknown as RoomRow[];
		expect(otherDatesOf(rows)).toEqual([['createdAtDateTime'], ['lastSyncedAt'], ['contract', 'createdDateTime']]);
		expect(otherDatesOf([{ ...row('a', 5), lastStory: { createdDateTime: at(5) } }])).toEqual([]);
		expect(otherDatesOf([])).toEqual([]);
	});

	it('the last message order holds per read of the list, rows without a message left out', () => {
		expect(inLastMessageOrder([[row('a', 5), row('b', null), row('c', 5), row('d', 1)]])).toBe(true);
		expect(inLastMessageOrder([[row('a', 5), row('b', 6)]])).toBe(false);
		// The first page read again at the end is its own read: its rows may be newer than the last page's.
		expect(
			inLastMessageOrder([
				[row('a', 5), row('b', 1)],
				[row('c', 9), row('a', 5)],
			]),
		).toBe(true);
	});

	describe('mayStopBelow', () => {
		it('stops below rows in last-message order whose last row is below the floor, when no other date could order the list', () => {
			expect(mayStopBelow([[row('a', 9, { created: 1 }), row('b', 5, { created: 3 }), row('c', 2, { created: 2 })]], floorAt(6))).toBe(true);
			expect(mayStopBelow([[row('a', 9), row('b', null)]], floorAt(6))).toBe(false); // no row below the floor
			expect(mayStopBelow([[row('a', 9), row('b', 6)]], floorAt(6))).toBe(false); // at the floor is not below it
			expect(mayStopBelow([[row('a', 9), row('b', 10), row('c', 2)]], floorAt(6))).toBe(false); // out of order
		});

		it('not where the rows are in order of creation too: the list may be sorted by creation, which no message moves', () => {
			expect(mayStopBelow([[row('a', 9, { created: 3 }), row('b', 5, { created: 2 }), row('c', 2, { created: 1 })]], floorAt(6))).toBe(false);
			// Rooms created at one moment: sorted by that date, the list is in the order of its tie-break. Rows in
			// the order of their room ids may be in that order (and in the last message's by chance); rows in another are not.
			expect(mayStopBelow([[row('a', 9, { created: 0 }), row('b', 5, { created: 0 }), row('c', 2, { created: 0 })]], floorAt(6))).toBe(false);
			expect(mayStopBelow([[row('c', 9, { created: 0 }), row('b', 5, { created: 0 }), row('a', 2, { created: 0 })]], floorAt(6))).toBe(false);
			expect(mayStopBelow([[row('b', 9, { created: 0 }), row('a', 5, { created: 0 }), row('c', 2, { created: 0 })]], floorAt(6))).toBe(true);
		});

		it('under a date that moves with each message (a sync time), only where the last row read has it below the floor', () => {
			expect(mayStopBelow([[row('a', 9, { synced: 9 }), row('b', 5, { synced: 5 }), row('c', 2, { synced: 3 })]], floorAt(6))).toBe(true);
			// Re-synced without a message: the list may be sorted by sync time, and rooms below may hold new messages.
			expect(mayStopBelow([[row('a', 9, { synced: 12 }), row('b', 5, { synced: 11 }), row('c', 2, { synced: 10 })]], floorAt(6))).toBe(false);
			// A whole page re-synced at one moment.
			expect(mayStopBelow([[row('a', 9, { synced: 12 }), row('b', 5, { synced: 12 }), row('c', 2, { synced: 12 })]], floorAt(6))).toBe(false);
			// Sync times out of order: not the list's order.
			expect(mayStopBelow([[row('a', 9, { synced: 9 }), row('b', 5, { synced: 12 }), row('c', 2, { synced: 3 })]], floorAt(6))).toBe(true);
		});
	});

	it('showsSameTimes: the same last message time and the same other dates; a re-sync or a message changes it', () => {
		expect(showsSameTimes(row('a', 5, { synced: 6, created: 1 }), row('a', 5, { synced: 6, created: 1 }))).toBe(true);
		expect(showsSameTimes(row('a', 5, { synced: 9, created: 1 }), row('a', 5, { synced: 6, created: 1 }))).toBe(false);
		expect(showsSameTimes(row('a', 7, { synced: 7 }), row('a', 5, { synced: 7 }))).toBe(false);
		expect(showsSameTimes(row('a', null), row('a', 5))).toBe(false);
	});

	it('showsNothingNew: a mark with the same last message; without a mark, a last message at or below the line', () => {
		const mark = { at: at(5), uids: ['a@5'], last: 'a@5' };
		expect(showsNothingNew(row('a', 5), mark, floorAt(9))).toBe(true);
		// Another last message, even one older than the line: read (a message synced late).
		expect(showsNothingNew({ ...row('a', 3), lastStoryId: 'a@late' }, mark, floorAt(9))).toBe(false);
		expect(showsNothingNew({ ...row('a', 7), lastStoryId: 'a@5' }, mark, null)).toBe(false); // the same id later: ids used again
		expect(showsNothingNew(row('b', 4), undefined, floorAt(5))).toBe(true);
		expect(showsNothingNew(row('b', 6), undefined, floorAt(5))).toBe(false);
		expect(showsNothingNew({ roomId: 'b', lastStoryId: 'b@x' }, undefined, floorAt(5))).toBe(false); // an id, no time
		expect(showsNothingNew(row('c', null), undefined, null)).toBe(true); // no message at all
	});
});

/**
 * A service of six rooms a to f, created in that order, each with one client message in that order,
 * two rooms a page, sorted (newest first) by the date `sortBy` names, which a test changes under the
 * running trigger as a service release would. Rooms carry `lastSyncedAt`: set when a room gets a message
 * and by `resync` without one.
 */
function inbox(sortBy: 'lastStoryAt' | 'createdAtDateTime' | 'lastSyncedAt' = 'lastStoryAt', createdAt = (index: number) => index) {
	const rooms: ServiceRow[] = ['a', 'b', 'c', 'd', 'e', 'f'].map((roomId, index) => row(roomId, 10 + index, { created: createdAt(index), synced: 10 + index }));
	const stories: Record<string, StoryRow[]> = Object.fromEntries(rooms.map((room) => [room.roomId, [{ storyId: room.lastStoryId!, userId: 'client', message: 'old', createdAt: room.lastStoryAt! }]]));
	const service = { sortBy, roomPages: 0 };
	const clock = { ms: Date.parse(at(0)) };
	const sources = sourcesOver(
		async (cursor: string | undefined) => {
			service.roomPages++;
			// Newest first; the room id breaks ties, as in the sandbox.
			const sorted = [...rooms].sort((x, y) => Date.parse(y[service.sortBy] ?? '') - Date.parse(x[service.sortBy] ?? '') || y.roomId.localeCompare(x.roomId));
			const start = cursor === undefined ? 0 : Number(cursor);
			return { data: structuredClone(sorted.slice(start, start + 2)), meta: start + 2 < sorted.length ? { nextCursor: String(start + 2) } : {} };
		},
		async (roomId: string) => ({ data: [...stories[roomId]].sort((x, y) => Date.parse(y.createdAt) - Date.parse(x.createdAt)) }),
		() => clock.ms,
	);
	/** A client message written at `minute`, synced at `syncedMinute` (later where it reached the service late). */
	const write = (roomId: string, storyId: string, minute: number, syncedMinute = minute) => {
		const room = rooms.find((candidate) => candidate.roomId === roomId)!;
		stories[roomId].push({ storyId, userId: 'client', message: 'new', createdAt: at(minute) });
		Object.assign(room, { lastStoryId: storyId, lastStoryAt: at(minute), lastSyncedAt: at(syncedMinute) });
	};
	const resync = (roomIds: string[], minute: number) => {
		for (const roomId of roomIds) rooms.find((candidate) => candidate.roomId === roomId)!.lastSyncedAt = at(minute);
	};
	let state: MessageTriggerState | undefined;
	/** One poll (the first one activates): the ids emitted and the pages of rooms it read. */
	const poll = async () => {
		service.roomPages = 0;
		if (!state) {
			state = await bootstrapMessages(sources.fetchRooms, sources.now);
			return { emitted: [] as string[], pages: service.roomPages, state };
		}
		const outcome = await pollMessages(state, sources);
		state = outcome.state;
		return { emitted: outcome.messages.map((message) => message.story.storyId), pages: service.roomPages, state };
	};
	return { service, clock, rooms, write, resync, poll, setState: (stored: MessageTriggerState) => (state = stored) };
}

describe('the early stop, on evidence from each poll', () => {
	it('reads every page while the rows read agree with the order of creation too; stops once its rows show a message moved an old room up', async () => {
		const { write, poll } = inbox();
		// Activation: the rows are in order of creation as well as of the last message: every page, then the first again.
		expect((await poll()).pages).toBe(4);
		// Every page, then the first again.
		expect(await poll()).toMatchObject({ emitted: [], pages: 4 });
		write('a', 'a2', 30);
		// a moved up: [a, f] are not in order of creation; f is not below the floor (it is the floor), so page 2
		// too, where d is; then the first page again.
		expect(await poll()).toMatchObject({ emitted: ['a2'], pages: 3 });
		expect(await poll()).toMatchObject({ emitted: [], pages: 1 });
	});

	it('a list sorted by sync time, rooms re-synced in the background: every page, every message, whatever the rows above show', async () => {
		// Rooms created at one moment: creation shows nothing about the order.
		const { service, write, resync, poll } = inbox('lastSyncedAt', () => 0);
		write('a', 'a2', 30);
		await poll();
		write('b', 'b2', 31);
		// Two old rooms re-synced after it: a whole page of rooms with nothing new, in last-message order (f, e).
		resync(['f', 'e'], 32);
		const afterResync = await poll();
		expect(afterResync.emitted).toEqual(['b2']);
		expect(afterResync.pages).toBe(4);
		resync(['d', 'c'], 33);
		write('c', 'c2', 34);
		resync(['a', 'd'], 35);
		expect((await poll()).emitted).toEqual(['c2']);
		expect(service.sortBy).toBe('lastSyncedAt');
	});

	it('an order switched under the running trigger: last message → creation → last message, every message once', async () => {
		const { service, write, poll } = inbox('lastStoryAt');
		await poll();
		write('a', 'a2', 30);
		expect((await poll()).emitted).toEqual(['a2']);
		expect((await poll()).pages).toBe(1);
		service.sortBy = 'createdAtDateTime';
		write('b', 'b2', 31);
		write('e', 'e2', 32);
		const underCreation = await poll();
		expect(underCreation.emitted).toEqual(['b2', 'e2']);
		expect(underCreation.state.mustReadAllPages).toBe(true);
		service.sortBy = 'lastStoryAt';
		write('c', 'c2', 33);
		// Seen out of order: the next poll reads every page; its pages are in last-message order again.
		const backInOrder = await poll();
		expect(backInOrder).toMatchObject({ emitted: ['c2'], pages: 4 });
		expect(backInOrder.state.mustReadAllPages).toBe(false);
		// So early stops are back.
		expect((await poll()).pages).toBe(1);
	});

	it('a message that reached the service late (written before the floor) in a room read before and in one never read: both arrive, and no poll stops early any more', async () => {
		const { write, poll } = inbox('lastStoryAt');
		await poll();
		write('f', 'f2', 30);
		expect((await poll()).emitted).toEqual(['f2']);
		// Written at minute 20 (below the floor of 30), synced now: e is listed second, on the page the poll reads.
		write('e', 'e-late', 20, 31);
		const late = await poll();
		expect(late.emitted).toEqual(['e-late']);
		expect(late.state.mustReadAllPages).toBe(true);
		// Room a, never read since the activation, gets a message written at 25: read after the history line, not the floor.
		write('a', 'a-late', 25, 32);
		expect((await poll()).emitted).toEqual(['a-late']);
	});

	it(`a message synced late into a room below the pages a poll reads: read by the first poll ${ALL_PAGES_AT_LEAST_EVERY_MS / 60_000} minutes after the last one that read every page; early stops return after a poll that reads every page without a contradiction`, async () => {
		const { clock, write, poll } = inbox('lastStoryAt');
		await poll();
		write('f', 'f2', 30);
		write('e', 'e2', 31);
		expect(await poll()).toMatchObject({ emitted: ['f2', 'e2'], pages: 3 });
		expect((await poll()).pages).toBe(1);
		// Written at minute 20 (after the activation, below the floor of 31), synced now: room c, listed third, on the second page.
		write('c', 'c-late', 20, 32);
		expect(await poll()).toMatchObject({ emitted: [], pages: 1 });
		clock.ms += ALL_PAGES_AT_LEAST_EVERY_MS;
		const hourLater = await poll();
		expect(hourLater.emitted).toEqual(['c-late']);
		expect(hourLater.state.mustReadAllPages).toBe(true);
		// Synced late but written before the activation (its history line is minute 15): history, never emitted.
		write('b', 'b-history', 14, 33);
		const noContradiction = await poll();
		expect(noContradiction).toMatchObject({ emitted: [], pages: 4 });
		expect(noContradiction.state.mustReadAllPages).toBe(false);
		expect((await poll()).pages).toBe(1);
	});

	it('a state stored before this version (roomsMoveOnMessages) enables no stop: a list in order of creation is read to its end', async () => {
		const { service, write, poll, setState } = inbox('createdAtDateTime');
		const activated = (await poll()).state;
		const stored = { ...activated, history: undefined, mustReadAllPages: undefined, roomsMoveOnMessages: true };
		setState(loadMessageState({ messages: stored as never })!);
		write('a', 'a2', 30);
		const polled = await poll();
		expect(polled.emitted).toEqual(['a2']);
		expect(polled.pages).toBe(4);
		expect(polled.state).not.toHaveProperty('roomsMoveOnMessages');
		expect(service.sortBy).toBe('createdAtDateTime');
	});

	it('a state stored with listOutOfMessageOrder (before it could be cleared) loads it as mustReadAllPages; a stored sweep without a cursor is dropped', async () => {
		const { poll } = inbox('lastStoryAt');
		const activated = (await poll()).state;
		const sweepWithoutCursor = { startedAt: at(0), unreadLastMessage: false, contradiction: false, failingRowsSeen: [] };
		const stored = { ...activated, mustReadAllPages: undefined, listOutOfMessageOrder: true, sweep: sweepWithoutCursor };
		const loaded = loadMessageState({ messages: stored as never })!;
		expect(loaded.mustReadAllPages).toBe(true);
		expect(loaded).not.toHaveProperty('sweep');
	});
});

it(`keeps at most ${MAX_ROOMS_KEPT} rooms; a room dropped is read after the highest mark dropped, not again from the history line`, async () => {
	const roomCount = MAX_ROOMS_KEPT + 2;
	const rooms: RoomRow[] = Array.from({ length: roomCount }, (_, index) => row(`r${index}`, null));
	const stories: Record<string, StoryRow[]> = Object.fromEntries(rooms.map((room) => [room.roomId, []]));
	const sources = sourcesOver(
		async () => ({ data: structuredClone(rooms) }),
		async (roomId: string) => ({ data: [...stories[roomId]].reverse() }),
	);
	let state = await bootstrapMessages(sources.fetchRooms, sources.now);
	rooms.forEach((room, index) => {
		const story = { storyId: `${room.roomId}-1`, userId: 'client', message: 'hello', createdAt: new Date(Date.UTC(2026, 0, 1) + index).toISOString() };
		stories[room.roomId].push(story);
		Object.assign(room, { lastStoryId: story.storyId, lastStoryAt: story.createdAt });
	});
	let outcome = await pollMessages(state, sources);
	expect(outcome.messages).toHaveLength(roomCount);
	state = outcome.state;
	expect(Object.keys(state.rooms)).toHaveLength(MAX_ROOMS_KEPT);
	expect(state.forgotten?.uids).toEqual(['r1-1']);
	// A second message in the two rooms dropped: only that one arrives.
	for (const roomId of ['r0', 'r1']) {
		const story = { storyId: `${roomId}-2`, userId: 'client', message: 'again', createdAt: new Date(Date.UTC(2026, 0, 2)).toISOString() };
		stories[roomId].push(story);
		Object.assign(rooms.find((room) => room.roomId === roomId)!, { lastStoryId: story.storyId, lastStoryAt: story.createdAt });
	}
	outcome = await pollMessages(state, sources);
	expect(outcome.messages.map((message) => message.story.storyId)).toEqual(['r0-2', 'r1-2']);
});
