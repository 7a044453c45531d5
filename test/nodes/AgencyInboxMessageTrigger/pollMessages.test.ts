/**
 * Cases the sandbox does not produce within one run: a room's row that shows a message its message
 * list does not return yet (a service whose lists are not updated at the same moment), and message ids
 * used again (a service whose data was reset, as each `npm start` starts a new sandbox).
 */
import { bootstrapMessages, pollMessages } from '../../../nodes/AgencyInboxMessageTrigger/pollMessages';
import type { RoomRow, StoryRow } from '../../../nodes/AgencyInboxMessageTrigger/types';

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
	const sources = {
		fetchRooms: async () => ({ data: [...rooms].sort((x, y) => Date.parse(y.lastStoryAt!) - Date.parse(x.lastStoryAt!)) }),
		fetchStories: async (roomId: string) => ({ data: [...stories[roomId]].filter((story) => !notListedYet.has(story.storyId)).reverse() }),
		loadMembers: async () => [{ uid: 'member' }],
		fetchProposal: async () => undefined,
		fetchProposalsPage: async () => ({ data: [] }),
		canContinue: () => true,
	};
	let state = await bootstrapMessages(sources.fetchRooms);
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
	const stories: Record<string, StoryRow[]> = {
		a: [{ storyId: 's1', userId: 'client', message: 'old', createdAt: '2026-01-01T00:00:00.000Z' }],
	};
	const rooms: RoomRow[] = [{ roomId: 'a', lastStoryId: 's1', lastStoryAt: '2026-01-01T00:00:00.000Z' }];
	const sources = {
		fetchRooms: async () => ({ data: [...rooms] }),
		fetchStories: async (roomId: string) => ({ data: [...stories[roomId]].reverse() }),
		loadMembers: async () => [{ uid: 'member' }],
		fetchProposal: async () => undefined,
		fetchProposalsPage: async () => ({ data: [] }),
		canContinue: () => true,
	};
	let state = await bootstrapMessages(sources.fetchRooms);
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

describe('the room order, told from the rows', () => {
	/** Rooms a to f, created in that order, each with one client message in that order: both orders agree. */
	function inbox() {
		const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 0, minute)).toISOString();
		const rooms: RoomRow[] = ['a', 'b', 'c', 'd', 'e', 'f'].map((roomId, index) => ({ roomId, createdAtDateTime: at(index), lastStoryId: `${roomId}1`, lastStoryAt: at(10 + index) }));
		const stories: Record<string, StoryRow[]> = Object.fromEntries(rooms.map((room) => [room.roomId, [{ storyId: room.lastStoryId!, userId: 'client', message: 'old', createdAt: room.lastStoryAt! }]]));
		let roomPages = 0;
		const sources = {
			// Sorted by the last message, two a page.
			fetchRooms: async (cursor: string | undefined) => {
				roomPages++;
				const sorted = [...rooms].sort((x, y) => Date.parse(y.lastStoryAt!) - Date.parse(x.lastStoryAt!));
				const start = cursor === undefined ? 0 : Number(cursor);
				return { data: sorted.slice(start, start + 2), meta: start + 2 < sorted.length ? { nextCursor: String(start + 2) } : {} };
			},
			fetchStories: async (roomId: string) => ({ data: [...stories[roomId]].reverse() }),
			loadMembers: async () => [{ uid: 'member' }],
			fetchProposal: async () => undefined,
			fetchProposalsPage: async () => ({ data: [] }),
			canContinue: () => true,
		};
		const write = (roomId: string, storyId: string, minute: number) => {
			const room = rooms.find((candidate) => candidate.roomId === roomId)!;
			stories[roomId].push({ storyId, userId: 'client', message: 'new', createdAt: at(minute) });
			Object.assign(room, { lastStoryId: storyId, lastStoryAt: at(minute) });
		};
		return { sources, write, pagesRead: () => roomPages, resetPages: () => (roomPages = 0) };
	}

	it('reads every page while the list agrees with the order of creation, and stops early once a new message moved an old room up', async () => {
		const { sources, write, pagesRead, resetPages } = inbox();
		let state = await bootstrapMessages(sources.fetchRooms);
		expect(state.roomsMoveOnMessages).toBe(false);
		expect(pagesRead()).toBe(3);

		resetPages();
		let outcome = await pollMessages(state, sources);
		expect(outcome.messages).toEqual([]);
		expect(pagesRead()).toBe(4); // every page, then the first again
		state = outcome.state;

		write('a', 'a2', 30);
		outcome = await pollMessages(state, sources);
		expect(outcome.messages.map((message) => message.story.storyId)).toEqual(['a2']);
		expect(outcome.state.roomsMoveOnMessages).toBe(true);

		resetPages();
		outcome = await pollMessages(outcome.state, sources);
		expect(outcome.messages).toEqual([]);
		expect(pagesRead()).toBe(1);
	});
});
