/**
 * The Message Trigger under every order the room list may have (and a room's messages), through n8n-core's engine against the
 * sandbox: activated under each order of `roomSort`, and with the order switched under the running
 * trigger (as a service release would), in waves of client messages far down the list, two in one room,
 * a new room, agency messages, background re-syncs of a page of rooms, and a message that reached the
 * service late (written before the newest one the last poll read). Every client message must arrive
 * exactly once, none written before the activation, each at the poll after its wave or the next one (one
 * poll later than under the default reading at most). Pages of 3 rooms, so every sweep spans pages.
 */
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { AgencyInboxMessageTrigger } from '../../../nodes/AgencyInboxMessageTrigger/AgencyInboxMessageTrigger.node';
import { ALL_PAGES_AT_LEAST_EVERY_MS } from '../../../nodes/AgencyInboxMessageTrigger/pollMessages';
import { resetProcessMemory } from '../../../nodes/shared/processMemory';
import { DEFAULT_VARIANTS, startSandbox, type SandboxVariants } from '../../../sandbox';
import { TriggerWorkflow } from '../../helpers/engine';
import { sandboxControl } from '../../helpers/sandboxControl';
import { LoopbackProxy } from '../AgencyInboxProposalTrigger/loopbackProxy';

type Sandbox = Awaited<ReturnType<typeof startSandbox>>;
type RoomSort = SandboxVariants['roomSort'];

const PAGE_SIZE = 3;
const ROOM_SORTS: RoomSort[] = ['lastStoryAt', 'lastClientMessageAt', 'createdAt', 'lastSyncedAt'];
/** Orders switched under a running trigger: the first is the one it was activated under. */
const SWITCHES: RoomSort[][] = [
	['lastStoryAt', 'createdAt', 'lastStoryAt'],
	['lastStoryAt', 'lastSyncedAt', 'lastStoryAt'],
	['lastClientMessageAt', 'createdAt'],
	['createdAt', 'lastStoryAt'],
	['lastSyncedAt', 'lastStoryAt'],
	['lastStoryAt', 'lastClientMessageAt', 'lastSyncedAt'],
];

describe('Agency Inbox Message Trigger under every order of the room list, and orders switched under it', () => {
	let sandbox: Sandbox;

	beforeAll(async () => {
		sandbox = await startSandbox({ requestsPerMinute: 0, pageSize: PAGE_SIZE, maxPageSize: PAGE_SIZE });
	});

	afterAll(async () => {
		await sandbox.close();
	});

	beforeEach(async () => {
		resetProcessMemory();
		await control('POST', 'variants', DEFAULT_VARIANTS);
		await control('POST', 'reset');
	});

	const newTrigger = (baseUrl = sandbox.url) =>
		new TriggerWorkflow({
			type: 'agencyInboxMessageTrigger',
			nodeType: new AgencyInboxMessageTrigger(),
			parameters: {},
			credentials: { agencyInboxApi: { apiKey: sandbox.apiKey, baseUrl, requestsPerMinute: 100_000 } },
		});
	const control = (method: string, path: string, body?: unknown) => sandboxControl<{ data: IDataObject }>(sandbox.origin, method, path, body);
	const change = async <T = IDataObject>(body: IDataObject) => (await control('POST', 'changes', body)).data as T;
	const useOrder = (roomSort: RoomSort) => control('POST', 'variants', { roomSort });
	const storyIdsOf = (result: INodeExecutionData[][] | null) => (result?.[0] ?? []).map(({ json }) => (json.message as IDataObject).storyId as string);

	/** The client messages (authors who are not agency members) newer than every seeded one. */
	function clientMessagesSince(historyEndMs: number): string[] {
		const members = new Set(sandbox.state.members.map((member) => member.uid));
		return Object.values(sandbox.state.stories)
			.flat()
			.filter((story) => !members.has(story.userId) && Date.parse(story.createdAt) > historyEndMs)
			.map((story) => story.storyId);
	}

	const createdAtOf = (roomId: string) => sandbox.state.rooms.find((room) => room.roomId === roomId)!.createdAtDateTime;
	const newestMessageAt = () => Math.max(...Object.values(sandbox.state.stories).flatMap((stories) => stories.map((story) => Date.parse(story.createdAt))));

	/** Rooms by the time of their last message, oldest first; rooms no wave writes in are taken from `untouched`. */
	function rooms() {
		const byLastMessage = [...sandbox.state.rooms].sort((a, b) => (a.lastStoryAt ?? '').localeCompare(b.lastStoryAt ?? ''));
		return { oldest: byLastMessage[0].roomId, firstCreated: sandbox.state.rooms[0].roomId, middle: byLastMessage[30].roomId, untouched: byLastMessage.slice(40, 50).map((room) => room.roomId) };
	}

	/**
	 * Waves of changes, one per poll, taken in turn. Each returns nothing; what the trigger must emit is
	 * read from the sandbox's stories afterwards.
	 */
	function waves(picked: ReturnType<typeof rooms>) {
		let newRoom = '';
		const untouched = [...picked.untouched];
		return [
			async () => {
				await change({ kind: 'clientMessage', roomId: picked.oldest, text: 'far down the list' });
				await change({ kind: 'clientMessage', roomId: picked.firstCreated, text: 'first room created' });
				await change({ kind: 'clientMessage', roomId: picked.middle, count: 2 });
				newRoom = (await change<{ roomId: string }>({ kind: 'clientMessage', newRoom: true })).roomId;
				await change({ kind: 'agencyMessage', roomId: untouched.pop() });
			},
			async () => {
				await change({ kind: 'roomResync', count: PAGE_SIZE });
				await change({ kind: 'clientMessage', roomId: picked.middle });
				await change({ kind: 'clientMessage', roomId: newRoom });
				await change({ kind: 'agencyMessage', roomId: picked.oldest });
			},
			async () => {
				await change({ kind: 'clientMessage', roomId: untouched.pop() });
			},
			async () => {
				// Written just before the newest message the last poll read, in a room whose last message is older.
				await change({ kind: 'lateClientMessage', roomId: untouched.pop(), createdAt: new Date(newestMessageAt() - 1).toISOString() });
				await change({ kind: 'roomResync', count: PAGE_SIZE });
			},
		];
	}

	/**
	 * Activates a trigger under `orders[0]`, then per order: switches to it (the first is already on),
	 * runs the next wave and polls; then the remaining waves, each followed by a poll, and two idle polls.
	 * Checks every client message once, nothing historic, each at the poll after its wave or the next.
	 */
	async function runUnder(orders: RoomSort[]) {
		await useOrder(orders[0]);
		const historyEndMs = newestMessageAt();
		const trigger = newTrigger();
		expect(await trigger.poll()).toBeNull();
		const plan = waves(rooms());
		const arrivals: Array<{ storyId: string; poll: number }> = [];
		const wavePolls = new Map<string, number>();
		let polls = 0;
		const pollOnce = async () => {
			polls++;
			for (const storyId of storyIdsOf(await trigger.poll())) arrivals.push({ storyId, poll: polls });
		};
		const wave = async (run: () => Promise<void>) => {
			const before = new Set(clientMessagesSince(historyEndMs));
			await run();
			for (const storyId of clientMessagesSince(historyEndMs)) if (!before.has(storyId)) wavePolls.set(storyId, polls + 1);
			await pollOnce();
		};
		for (const [index, order] of orders.entries()) {
			if (index > 0) await useOrder(order);
			await wave(plan[index % plan.length]);
		}
		for (const run of plan.slice(orders.length)) await wave(run);
		await pollOnce();
		await pollOnce();

		const expected = clientMessagesSince(historyEndMs);
		expect(arrivals.map((arrival) => arrival.storyId).sort()).toEqual([...expected].sort());
		const late = arrivals.filter((arrival) => arrival.poll > wavePolls.get(arrival.storyId)! + 1);
		expect(late).toEqual([]);
		return trigger;
	}

	describe.each(ROOM_SORTS)('activated under roomSort=%s', (roomSort) => {
		it('every client message once, nothing from before the activation, each at the poll after it or the next', async () => {
			await runUnder([roomSort]);
		});
	});

	describe.each(SWITCHES.map((orders) => [orders.join(' → '), orders] as const))('switched under the running trigger: %s', (_label, orders) => {
		it('every client message once, nothing from before the activation, each at the poll after it or the next', async () => {
			await runUnder(orders);
		});
	});

	it('activated under sync time while a re-sync moves the room with the newest message above the pages being read: nothing from before the activation', async () => {
		await useOrder('lastSyncedAt');
		const { untouched } = rooms();
		const newest = (await change<{ roomId: string }>({ kind: 'clientMessage', roomId: untouched[0], text: 'before the activation' })).roomId;
		const proxy = new LoopbackProxy(sandbox.origin);
		await proxy.start();
		try {
			let moved = false;
			proxy.beforeForward = async ({ path, query }) => {
				if (!moved && path.endsWith('/v1/master-inbox/rooms') && query.has('pageCursor')) {
					moved = true;
					await change({ kind: 'roomResync', roomIds: [newest] });
				}
			};
			const trigger = newTrigger(`${proxy.origin}/service`);
			expect(await trigger.poll()).toBeNull();
			expect(moved).toBe(true);
			proxy.beforeForward = undefined;
			expect(await trigger.poll()).toBeNull();
			const after = await change<{ storyId: string }>({ kind: 'clientMessage', roomId: newest, text: 'after the activation' });
			expect(storyIdsOf(await trigger.poll())).toEqual([after.storyId]);
		} finally {
			await proxy.close();
		}
	});

	it("a room's message order switched under the running trigger (newest first → oldest first → newest first): two messages in one room each once", async () => {
		const trigger = newTrigger();
		expect(await trigger.poll()).toBeNull();
		const { middle, untouched } = rooms();
		const written: string[] = [];
		for (const storyOrder of ['oldestFirst', 'newestFirst', 'oldestFirst', 'newestFirst']) {
			await control('POST', 'variants', { storyOrder });
			for (const roomId of [middle, untouched[0]])
				written.push(...(await change<{ stories: Array<{ storyId: string }> }>({ kind: 'clientMessage', roomId, count: 2 })).stories.map((story) => story.storyId));
			expect(storyIdsOf(await trigger.poll())).toEqual(written.slice(-4));
		}
		expect(await trigger.poll()).toBeNull();
	});

	it(`in order of the last message, a message synced late into a room below the pages a poll reads arrives with the first poll that reads every page (${ALL_PAGES_AT_LEAST_EVERY_MS / 60_000} minutes after the last)`, async () => {
		const trigger = newTrigger();
		expect(await trigger.poll()).toBeNull();
		const { untouched } = rooms();
		// Four rooms written in an order that is not their order of creation, so the rows on top show a message moved rooms.
		const byCreation = untouched.slice(0, 4).sort((a, b) => createdAtOf(a).localeCompare(createdAtOf(b)));
		const written = [byCreation[2], byCreation[3], byCreation[1], byCreation[0]];
		for (const roomId of written) await change({ kind: 'clientMessage', roomId });
		expect(storyIdsOf(await trigger.poll())).toHaveLength(4);
		const firstWrittenAt = Date.parse(sandbox.state.stories[written[0]].at(-1)!.createdAt);
		// Written just before the first of the four: listed fifth, on the second page, which a poll leaves unread.
		const late = await change<{ storyId: string }>({ kind: 'lateClientMessage', roomId: untouched[5], createdAt: new Date(firstWrittenAt - 1).toISOString() });
		await control('DELETE', 'requests');
		expect(await trigger.poll()).toBeNull();
		// One page of rooms: the late message's room, on the second, stays unread (the proposal list's full pass goes on beside it).
		const roomPagesRead = ((await control('GET', 'requests')).data as unknown as Array<{ path: string }>).filter((request) => request.path === '/v1/master-inbox/rooms');
		expect(roomPagesRead).toHaveLength(1);
		jest.useFakeTimers({
			now: Date.now() + ALL_PAGES_AT_LEAST_EVERY_MS,
			doNotFake: ['nextTick', 'setImmediate', 'clearImmediate', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'queueMicrotask', 'hrtime', 'performance'],
		});
		try {
			expect(storyIdsOf(await trigger.poll())).toEqual([late.storyId]);
		} finally {
			jest.useRealTimers();
		}
		expect(await trigger.poll()).toBeNull();
	});
});
