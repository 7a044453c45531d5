/**
 * One room holds back no other (issue 40, part 2): a room whose messages or proposal fail (403, 404,
 * 5xx after the pipeline's retries, a connection dropped without an answer) is held back on its own,
 * through n8n-core's engine against the sandbox. The other rooms' messages arrive on the next poll,
 * their items naming the failing room in their notice; the failing room is retried with a backoff
 * (the test moves the clock the poll reads) and its messages arrive once when it answers again; a room
 * failing for good costs no deep reads once it is at the longest backoff, and shows as one failed
 * execution after an hour, not again for a day. Pages of 3 rooms.
 */
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { AgencyInboxMessageTrigger } from '../../../nodes/AgencyInboxMessageTrigger/AgencyInboxMessageTrigger.node';
import {
	FIRST_RETRY_MS,
	isRoomFailure,
	LONGEST_RETRY_MS,
	retryDelayMs,
	SHOWN_AS_FAILED_AFTER_MS,
	SHOWN_AS_FAILED_AT_MOST_EVERY_MS,
} from '../../../nodes/AgencyInboxMessageTrigger/failingRooms';
import type { MessageSources } from '../../../nodes/AgencyInboxMessageTrigger/pollMessages';
import { bootstrapMessages } from '../../../nodes/AgencyInboxMessageTrigger/activation';
import { ALL_PAGES_AT_LEAST_EVERY_MS, pollMessages } from '../../../nodes/AgencyInboxMessageTrigger/pollMessages';
import { loadMessageState, MAX_ROOMS_KEPT } from '../../../nodes/AgencyInboxMessageTrigger/state';
import type { RoomRow, StoryRow } from '../../../nodes/AgencyInboxMessageTrigger/types';
import { toNodeApiError } from '../../../nodes/shared/errors';
import { resetProcessMemory } from '../../../nodes/shared/processMemory';
import { pipelineTiming } from '../../../nodes/shared/transport';
import { startSandbox } from '../../../sandbox';
import { TriggerWorkflow } from '../../helpers/engine';
import { sandboxControl } from '../../helpers/sandboxControl';
import { messageState, untilProposalsRead } from './roomProposalsHelpers';

type Sandbox = Awaited<ReturnType<typeof startSandbox>>;

const MINUTE_MS = 60_000;

describe('retryDelayMs: the backoff of a failing room', () => {
	it('waits 1 minute after the first failure, doubling to 32, then hourly', () => {
		expect([1, 2, 3, 4, 5, 6, 7, 8, 50].map((attempts) => retryDelayMs(attempts) / MINUTE_MS)).toEqual([1, 2, 4, 8, 16, 32, 60, 60, 60]);
		expect(FIRST_RETRY_MS).toBe(MINUTE_MS);
		expect(LONGEST_RETRY_MS).toBe(60 * MINUTE_MS);
	});
});

describe("isRoomFailure: which failures are one room's", () => {
	const node = { id: 'n', name: 'n', type: 't', typeVersion: 1, position: [0, 0] as [number, number], parameters: {} };
	const failure = (more: { statusCode?: number; networkErrorCode?: string }) => toNodeApiError(node, { method: 'GET', path: '/v1/master-inbox/rooms/r/stories', ...more });

	it("a 403, 404, 400 or 5xx, and a request that left n8n and got no answer, are the room's", () => {
		for (const statusCode of [400, 403, 404, 500, 503]) expect(isRoomFailure(failure({ statusCode }))).toBe(true);
		for (const networkErrorCode of ['ECONNRESET', 'ETIMEDOUT']) expect(isRoomFailure(failure({ networkErrorCode }))).toBe(true);
	});

	it('a 401, a 429, a connection n8n could not open and an error raised inside n8n fail the poll', () => {
		for (const statusCode of [401, 429]) expect(isRoomFailure(failure({ statusCode }))).toBe(false);
		for (const networkErrorCode of ['ECONNREFUSED', 'ENOTFOUND']) expect(isRoomFailure(failure({ networkErrorCode }))).toBe(false);
		expect(isRoomFailure(new TypeError('x is undefined'))).toBe(false);
	});
});

describe('the stored failing rooms', () => {
	const stored = { seq: 3, history: null, floor: null, rooms: {}, listOutOfMessageOrder: false, proposals: {} };

	it('a state stored before they existed loads without any; a damaged entry is dropped, a sound one kept', () => {
		expect(loadMessageState({ messages: stored })?.failingRooms).toBeUndefined();
		const sound = { since: '2026-01-01T00:00:00.000Z', attempts: 2, retryAt: '2026-01-01T00:03:00.000Z', failure: '403 Access denied' };
		const loaded = loadMessageState({ messages: { ...stored, failingRooms: { a: sound, b: { since: 'never' }, c: 7 } } });
		expect(loaded?.failingRooms).toEqual({ a: sound });
		expect(loadMessageState({ messages: { ...stored, failingRooms: 'nonsense' } })?.failingRooms).toBeUndefined();
	});
});

it(`a failing room's mark is kept past the ${MAX_ROOMS_KEPT} rooms kept, so its message arrives once it recovers (in-memory service)`, async () => {
	const rooms: RoomRow[] = Array.from({ length: MAX_ROOMS_KEPT + 2 }, (_, index) => ({ roomId: `r${index}`, lastStoryId: null, lastStoryAt: null }));
	const stories: Record<string, StoryRow[]> = Object.fromEntries(rooms.map((room) => [room.roomId, []]));
	const clock = { ms: Date.UTC(2026, 0, 1) };
	let failing = true;
	const forbidden = toNodeApiError({ id: 'n', name: 'n', type: 't', typeVersion: 1, position: [0, 0], parameters: {} }, { method: 'GET', path: '/v1/master-inbox/rooms/r0/stories', statusCode: 403 });
	const sources: MessageSources = {
		fetchRooms: async () => ({ data: structuredClone(rooms) }),
		fetchStories: async (roomId) => {
			if (failing && roomId === 'r0') throw forbidden;
			return { data: [...stories[roomId]].reverse() };
		},
		loadMembers: async () => [{ uid: 'member' }],
		fetchProposal: async () => undefined,
		fetchProposalsPage: async () => ({ data: [] }),
		canContinue: () => true,
		now: () => clock.ms,
	};
	let state = await bootstrapMessages(sources.fetchRooms, sources.now);
	// r0 gets the oldest of the messages: its room is the first a bound by recency would drop.
	rooms.forEach((room, index) => {
		const story = { storyId: `${room.roomId}-1`, userId: 'client', message: 'hello', createdAt: new Date(clock.ms + 1 + index).toISOString() };
		stories[room.roomId].push(story);
		Object.assign(room, { lastStoryId: story.storyId, lastStoryAt: story.createdAt });
	});
	let outcome = await pollMessages(state, sources);
	expect(outcome.messages).toHaveLength(MAX_ROOMS_KEPT + 1);
	state = outcome.state;
	expect(Object.keys(state.rooms)).toHaveLength(MAX_ROOMS_KEPT);
	expect(state.rooms.r0).toBeDefined();
	failing = false;
	clock.ms += FIRST_RETRY_MS;
	outcome = await pollMessages(state, sources);
	expect(outcome.messages.map((message) => message.story.storyId)).toEqual(['r0-1']);
	expect((await pollMessages(outcome.state, sources)).messages).toEqual([]);
});

describe('Agency Inbox Message Trigger: one failing room holds back no other', () => {
	let sandbox: Sandbox;
	const productionBackoff = pipelineTiming.retryBackoffMs;

	beforeAll(async () => {
		sandbox = await startSandbox({ requestsPerMinute: 0, pageSize: 3, maxPageSize: 3 });
		// The pipeline retries a read after a 5xx or a dropped connection: three quick retries here.
		pipelineTiming.retryBackoffMs = [1, 1, 1];
	});

	afterAll(async () => {
		pipelineTiming.retryBackoffMs = productionBackoff;
		await sandbox.close();
	});

	beforeEach(async () => {
		resetProcessMemory();
		await control('POST', 'reset');
		// Only the clock is faked: the poll's `now`, the backoff and the sandbox's message times move with it.
		jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'clearImmediate', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'queueMicrotask', 'hrtime', 'performance'] });
	});

	afterEach(() => {
		jest.useRealTimers();
	});

	const control = async (method: string, path: string, body?: unknown) => await sandboxControl<{ data: IDataObject }>(sandbox.origin, method, path, body);
	const later = (ms: number) => jest.setSystemTime(Date.now() + ms);
	const clientMessage = async (roomId: string, text: string) => await control('POST', 'changes', { kind: 'clientMessage', roomId, text });
	const storiesPath = (roomId: string) => `/v1/master-inbox/rooms/${roomId}/stories`;
	const failFor = async (roomId: string, fault: IDataObject = { status: 403 }) => await control('POST', 'faults', { method: 'GET', pathPrefix: storiesPath(roomId), count: 100_000, ...fault });
	const liftFaults = async () => await control('DELETE', 'faults');
	const requests = async () => (await control('GET', 'requests')).data as unknown as Array<{ path: string; query: Record<string, string> }>;
	const requestsTo = async (path: string) => (await requests()).filter((request) => request.path === path).length;

	const texts = (result: INodeExecutionData[][] | null) => (result?.[0] ?? []).map(({ json }) => `${(json.room as IDataObject).id}: ${(json.message as IDataObject).text}`);
	const notices = (result: INodeExecutionData[][] | null) => (result?.[0] ?? []).map(({ json }) => json.notice as string | undefined);

	const createdAtOf = (roomId: string) => sandbox.state.rooms.find((room) => room.roomId === roomId)!.createdAtDateTime;

	/** Three rooms from the middle of the list, so none is on top before its message. */
	const threeRooms = () => sandbox.state.rooms.slice(10, 13).map((room) => room.roomId);

	const messageTrigger = () =>
		new TriggerWorkflow({
			type: 'agencyInboxMessageTrigger',
			nodeType: new AgencyInboxMessageTrigger(),
			parameters: {},
			credentials: { agencyInboxApi: { apiKey: sandbox.apiKey, baseUrl: sandbox.url, requestsPerMinute: 100_000 } },
		});

	async function activated() {
		const trigger = messageTrigger();
		expect(await trigger.poll()).toBeNull();
		await untilProposalsRead(trigger);
		return trigger;
	}

	it("a room answering 403: the other rooms' messages arrive at the next poll, naming it in their notice; its own arrive once after the fault is lifted and its backoff passed", async () => {
		const trigger = await activated();
		const [failing, other, third] = threeRooms();
		await failFor(failing);
		await clientMessage(failing, 'held back');
		await clientMessage(other, 'first');
		await clientMessage(third, 'second');

		const first = await trigger.poll();
		expect(texts(first)).toEqual([`${other}: first`, `${third}: second`]);
		for (const notice of notices(first)) expect(notice).toMatch(new RegExp(`${failing} \\(since .*: 403 `));
		expect(messageState(trigger)?.failingRooms).toMatchObject({ [failing]: { attempts: 1 } });

		// Before its next try the room is not read at all; messages elsewhere go on arriving.
		const triedBefore = await requestsTo(storiesPath(failing));
		await clientMessage(other, 'third');
		expect(texts(await trigger.poll())).toEqual([`${other}: third`]);
		expect(await requestsTo(storiesPath(failing))).toBe(triedBefore);

		await liftFaults();
		expect(await trigger.poll()).toBeNull();
		later(FIRST_RETRY_MS);
		const recovered = await trigger.poll();
		expect(texts(recovered)).toEqual([`${failing}: held back`]);
		expect(notices(recovered)).toEqual([undefined]);
		expect(messageState(trigger)?.failingRooms).toBeUndefined();
		expect(await trigger.poll()).toBeNull();
	});

	it.each([
		['a 404', { status: 404 }],
		["a 503 after the pipeline's retries", { status: 503 }],
		['a connection dropped without an answer', { kind: 'drop' }],
	])('a room failing with %s holds back only itself, and its messages arrive once it answers again', async (_label, fault) => {
		const trigger = await activated();
		const [failing, other] = threeRooms();
		await failFor(failing, fault);
		await clientMessage(failing, 'held back');
		await clientMessage(other, 'on time');
		const first = await trigger.poll();
		expect(texts(first)).toEqual([`${other}: on time`]);
		expect(notices(first)[0]).toContain(failing);

		// Still failing at its first retry: tried again, then held back for two minutes.
		later(FIRST_RETRY_MS);
		expect(await trigger.poll()).toBeNull();
		expect(messageState(trigger)?.failingRooms).toMatchObject({ [failing]: { attempts: 2 } });
		await liftFaults();
		later(FIRST_RETRY_MS);
		expect(await trigger.poll()).toBeNull();
		later(FIRST_RETRY_MS);
		expect(texts(await trigger.poll())).toEqual([`${failing}: held back`]);
		expect(await trigger.poll()).toBeNull();
	});

	it("a room whose proposal cannot be looked up (503) is held back the same way, the other room's message is not", async () => {
		const trigger = messageTrigger();
		// Activated only: the proposal list is still being read, so a room's proposal is looked up by the id the room names.
		expect(await trigger.poll()).toBeNull();
		const [failing, other] = sandbox.state.rooms.filter((room) => room.vendorProposal !== null).slice(10, 12).map((room) => room.roomId);
		const vendorId = sandbox.state.rooms.find((room) => room.roomId === failing)!.vendorProposal!.id;
		await control('POST', 'faults', { status: 503, method: 'GET', pathPrefix: `/v1/agency/proposals/${vendorId}`, count: 100_000 });
		await clientMessage(failing, 'held back');
		await clientMessage(other, 'on time');
		const first = await trigger.poll();
		expect(texts(first)).toEqual([`${other}: on time`]);
		expect(notices(first)[0]).toContain(`${failing} (since`);
		await liftFaults();
		later(FIRST_RETRY_MS);
		expect(texts(await trigger.poll())).toEqual([`${failing}: held back`]);
		expect(await trigger.poll()).toBeNull();
	});

	it('a room failing for good: retried after 1, 2, 4 … minutes, then hourly with the polls that read every page; it makes no other poll read deeper, and arrives once when it recovers', async () => {
		const trigger = await activated();
		const [failing, ...others] = threeRooms();
		await failFor(failing);
		await clientMessage(failing, 'after a long time');
		expect(await trigger.poll()).toBeNull();

		// Three rooms get a message above it (in an order that is not theirs of creation, so the rows show
		// the list is not sorted by creation): its row moves to the second page of 3.
		const [older, newer] = others.sort((a, b) => createdAtOf(a).localeCompare(createdAtOf(b)));
		for (const roomId of [older, sandbox.state.rooms[20].roomId, newer]) await clientMessage(roomId, 'above');
		expect(texts(await trigger.poll())).toHaveLength(3);

		const tries: number[] = [];
		const shownAsFailed: number[] = [];
		for (let minute = 1; minute <= 2 * 60 + 5; minute++) {
			later(MINUTE_MS);
			const before = await requestsTo(storiesPath(failing));
			const outcome = await trigger.poll().catch((error: Error) => error);
			if (outcome instanceof Error) shownAsFailed.push(minute);
			else expect(outcome).toBeNull();
			if ((await requestsTo(storiesPath(failing))) > before) tries.push(minute);
		}
		// Tried at the first poll after each backoff (1, 2, 4, … 32 minutes), then with the polls that read every page.
		expect(tries.slice(0, 6)).toEqual([1, 3, 7, 15, 31, 63]);
		expect(shownAsFailed).toEqual([SHOWN_AS_FAILED_AFTER_MS / MINUTE_MS]);
		const hourly = tries.slice(6);
		expect(hourly.length).toBeGreaterThanOrEqual(1);
		expect(hourly.length).toBeLessThanOrEqual(2);
		expect(messageState(trigger)?.mustReadAllPages).toBe(false);

		// An idle poll that is not the hourly one reads one page of rooms, though the failing room's row is on the second.
		later(MINUTE_MS);
		await control('DELETE', 'requests');
		expect(await trigger.poll()).toBeNull();
		expect((await requests()).filter((request) => request.path === '/v1/master-inbox/rooms')).toHaveLength(1);

		// Once it answers again, its message arrives once, by the next poll that reads every page at the latest.
		await liftFaults();
		const emitted: string[] = [];
		for (let elapsed = 0; elapsed < ALL_PAGES_AT_LEAST_EVERY_MS; elapsed += 10 * MINUTE_MS) {
			later(10 * MINUTE_MS);
			emitted.push(...texts(await trigger.poll()));
		}
		expect(emitted).toEqual([`${failing}: after a long time`]);
	});

	it('a room failing for an hour shows as one failed execution, before any request of that poll; the next poll delivers the other rooms; not again within a day, nor by the first poll after a restart', async () => {
		const trigger = await activated();
		const [failing, other] = threeRooms();
		await failFor(failing);
		await clientMessage(failing, 'held back');
		expect(await trigger.poll()).toBeNull();

		for (let elapsed = 0; elapsed < SHOWN_AS_FAILED_AFTER_MS - 10 * MINUTE_MS; elapsed += 10 * MINUTE_MS) {
			later(10 * MINUTE_MS);
			expect(await trigger.poll()).toBeNull();
		}
		later(10 * MINUTE_MS);
		await clientMessage(other, 'while it fails');
		await control('DELETE', 'requests');
		await expect(trigger.poll()).rejects.toThrow(new RegExp(`^Room ${failing} could not be read since .*: 403 `));
		expect(await requests()).toEqual([]);
		expect(texts(await trigger.poll())).toEqual([`${other}: while it fails`]);

		// Polls every 50 minutes for a day: no failed execution; the day after, one again.
		for (let elapsed = 50 * MINUTE_MS; elapsed < SHOWN_AS_FAILED_AT_MOST_EVERY_MS; elapsed += 50 * MINUTE_MS) {
			later(50 * MINUTE_MS);
			expect(await trigger.poll()).toBeNull();
		}
		later(50 * MINUTE_MS);
		await expect(trigger.poll()).rejects.toThrow(failing);
		expect(await trigger.poll()).toBeNull();

		// After a restart of n8n (its process memory gone) the first poll, which may be the activation's own, does not show it; the next does.
		resetProcessMemory();
		later(10 * MINUTE_MS);
		expect(await trigger.poll()).toBeNull();
		await expect(trigger.poll()).rejects.toThrow(failing);

		// Polled every 10 minutes once the room answers again: its message arrives once, with the next try.
		await liftFaults();
		const emitted: string[] = [];
		for (let elapsed = 0; elapsed < LONGEST_RETRY_MS; elapsed += 10 * MINUTE_MS) {
			later(10 * MINUTE_MS);
			emitted.push(...texts(await trigger.poll()));
		}
		expect(emitted).toEqual([`${failing}: held back`]);
	});
});
