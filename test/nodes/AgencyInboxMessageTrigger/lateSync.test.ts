/**
 * The Message Trigger and messages the service syncs late, behind a message of their room the trigger
 * already read (issue 40), through n8n-core's engine against the sandbox under every single reading
 * (every order of the room list among them): an agency member replies, a poll reads the room, then the
 * client's earlier message is synced (`lateClientMessage` with `beforeLastByMs`): the row's last
 * message and time stay, its storiesCount and lastSyncedAt move. Pages of 3 rooms.
 */
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { AgencyInboxMessageTrigger } from '../../../nodes/AgencyInboxMessageTrigger/AgencyInboxMessageTrigger.node';
import { MAX_IDS_KEPT, MAX_IDS_PER_ROOM, MIN_IDS_PER_ROOM, windowsWithinTotal } from '../../../nodes/AgencyInboxMessageTrigger/lateSync';
import { ALL_PAGES_AT_LEAST_EVERY_MS } from '../../../nodes/AgencyInboxMessageTrigger/pollMessages';
import { DEFAULT_VARIANTS, SINGLE_READINGS, startSandbox, type SandboxVariants } from '../../../sandbox';
import { TriggerWorkflow } from '../../helpers/engine';
import { sandboxControl } from '../../helpers/sandboxControl';
import { sandboxPerSuite } from '../../helpers/sandboxPerSuite';
import { untilProposalsRead } from './roomProposalsHelpers';

type Sandbox = Awaited<ReturnType<typeof startSandbox>>;

const PAGE_SIZE = 3;
const DAY_MS = 24 * 60 * 60_000;
/** Only Date is faked: the engine, the sandbox and its clock see the time move; timers stay real. */
const REAL_TIMERS = ['nextTick', 'setImmediate', 'clearImmediate', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'queueMicrotask', 'hrtime', 'performance'] as const;

async function withDateAt<T>(nowMs: number, run: () => Promise<T>): Promise<T> {
	jest.useFakeTimers({ now: nowMs, doNotFake: [...REAL_TIMERS] });
	try {
		return await run();
	} finally {
		jest.useRealTimers();
	}
}

const setUp = (variants: SandboxVariants) => sandboxPerSuite({ requestsPerMinute: 0, pageSize: PAGE_SIZE, maxPageSize: PAGE_SIZE, variants });

const control = (sandbox: Sandbox, method: string, path: string, body?: unknown) => sandboxControl<{ data: IDataObject }>(sandbox.origin, method, path, body);
const change = async <T = IDataObject>(sandbox: Sandbox, body: IDataObject) => (await control(sandbox, 'POST', 'changes', body)).data as T;
const storyIdsOf = (result: INodeExecutionData[][] | null) => (result?.[0] ?? []).map(({ json }) => (json.message as IDataObject).storyId as string);
const newestMessageAt = (sandbox: Sandbox) => Math.max(...Object.values(sandbox.state.stories).flatMap((stories) => stories.map((story) => Date.parse(story.createdAt))));

async function requestsTo(sandbox: Sandbox, pathPart: string): Promise<number> {
	const requests = (await control(sandbox, 'GET', 'requests')).data as unknown as Array<{ path: string }>;
	return requests.filter((request) => request.path.includes(pathPart)).length;
}

function newTrigger(sandbox: Sandbox) {
	return new TriggerWorkflow({
		type: 'agencyInboxMessageTrigger',
		nodeType: new AgencyInboxMessageTrigger(),
		parameters: {},
		credentials: { agencyInboxApi: { apiKey: sandbox.apiKey, baseUrl: sandbox.url, requestsPerMinute: 100_000 } },
	});
}

/**
 * An agency member's reply in some room, read by a poll (it emits nothing: not a client's). The
 * proposal list is read through first: where a room's id names no proposal, a client message waits
 * for it (roomProposals.test.ts), and these tests are about when a late message arrives.
 */
async function replyRead(sandbox: Sandbox, trigger: TriggerWorkflow): Promise<{ roomId: string; storyId: string; createdAt: string }> {
	await untilProposalsRead(trigger);
	const reply = await change<{ roomId: string; storyId: string; createdAt: string }>(sandbox, { kind: 'agencyMessage', text: 'Here is the estimate.' });
	expect(await trigger.poll()).toBeNull();
	return reply;
}

describe.each(SINGLE_READINGS.map(({ label, variants }) => [label, variants] as const))('Agency Inbox Message Trigger, a message synced late behind a read reply, reading %s', (_label, variants) => {
	const context = setUp(variants);

	it('written 14 s before the reply the last poll read: emitted once, by the next poll', async () => {
		const { sandbox } = context;
		const trigger = newTrigger(sandbox);
		expect(await trigger.poll()).toBeNull();
		const reply = await replyRead(sandbox, trigger);
		const late = await change<{ storyId: string; createdAt: string }>(sandbox, { kind: 'lateClientMessage', roomId: reply.roomId, beforeLastByMs: 14_000 });
		expect(Date.parse(reply.createdAt) - Date.parse(late.createdAt)).toBe(14_000);
		expect(storyIdsOf(await trigger.poll())).toEqual([late.storyId]);
		expect(await trigger.poll()).toBeNull();
		// A second one behind the same reply, with a new client message on top: both once.
		const second = await change<{ storyId: string }>(sandbox, { kind: 'lateClientMessage', roomId: reply.roomId, beforeLastByMs: 7_000 });
		const onTop = await change<{ storyId: string }>(sandbox, { kind: 'clientMessage', roomId: reply.roomId });
		expect(storyIdsOf(await trigger.poll())).toEqual([second.storyId, onTop.storyId]);
		expect(await trigger.poll()).toBeNull();
	});

	it('written days before the reply (after the activation): emitted once, by the next poll', async () => {
		const { sandbox } = context;
		const trigger = newTrigger(sandbox);
		expect(await trigger.poll()).toBeNull();
		await withDateAt(Date.now() + 4 * DAY_MS, async () => {
			const reply = await replyRead(sandbox, trigger);
			const late = await change<{ storyId: string }>(sandbox, { kind: 'lateClientMessage', roomId: reply.roomId, beforeLastByMs: 3 * DAY_MS });
			expect(storyIdsOf(await trigger.poll())).toEqual([late.storyId]);
			expect(await trigger.poll()).toBeNull();
		});
	});

	it(`written before ${MIN_IDS_PER_ROOM + 16} messages the trigger read in its room since (past each room's minimum window): emitted once`, async () => {
		const { sandbox } = context;
		const trigger = newTrigger(sandbox);
		expect(await trigger.poll()).toBeNull();
		const reply = await replyRead(sandbox, trigger);
		const clients = await change<{ stories: Array<{ storyId: string }> }>(sandbox, { kind: 'clientMessage', roomId: reply.roomId, count: MIN_IDS_PER_ROOM + 10 });
		expect(storyIdsOf(await trigger.poll())).toEqual(clients.stories.map(({ storyId }) => storyId));
		for (let i = 0; i < 5; i++) await change(sandbox, { kind: 'agencyMessage', roomId: reply.roomId });
		expect(await trigger.poll()).toBeNull();
		const writtenAt = new Date(Date.parse(reply.createdAt) - 1000).toISOString();
		const late = await change<{ storyId: string }>(sandbox, { kind: 'lateClientMessage', roomId: reply.roomId, createdAt: writtenAt });
		expect(storyIdsOf(await trigger.poll())).toEqual([late.storyId]);
		expect(await trigger.poll()).toBeNull();
	});

	it('written before the activation, synced after it behind a read reply: never emitted (nothing historic)', async () => {
		const { sandbox } = context;
		const historyEndMs = newestMessageAt(sandbox);
		const trigger = newTrigger(sandbox);
		expect(await trigger.poll()).toBeNull();
		const reply = await replyRead(sandbox, trigger);
		await change(sandbox, { kind: 'lateClientMessage', roomId: reply.roomId, createdAt: new Date(historyEndMs - 1).toISOString() });
		expect(await trigger.poll()).toBeNull();
		const after = await change<{ storyId: string }>(sandbox, { kind: 'clientMessage', roomId: reply.roomId });
		expect(storyIdsOf(await trigger.poll())).toEqual([after.storyId]);
		expect(await trigger.poll()).toBeNull();
	});
});

describe('Agency Inbox Message Trigger, a message synced late behind a read reply, in the default order', () => {
	const context = setUp(DEFAULT_VARIANTS);

	it('an idle poll after a late message still costs one request', async () => {
		const { sandbox } = context;
		const trigger = newTrigger(sandbox);
		expect(await trigger.poll()).toBeNull();
		await untilProposalsRead(trigger);
		const reply = await replyRead(sandbox, trigger);
		const late = await change<{ storyId: string }>(sandbox, { kind: 'lateClientMessage', roomId: reply.roomId, beforeLastByMs: 14_000 });
		expect(storyIdsOf(await trigger.poll())).toEqual([late.storyId]);
		await control(sandbox, 'DELETE', 'requests');
		expect(await trigger.poll()).toBeNull();
		expect(await requestsTo(sandbox, '/v1/')).toBe(1);
	});

	it(`in a room below the pages a poll reads (its row does not move): emitted once by the first poll that reads every page (${ALL_PAGES_AT_LEAST_EVERY_MS / 60_000} minutes after the last)`, async () => {
		const { sandbox } = context;
		const trigger = newTrigger(sandbox);
		expect(await trigger.poll()).toBeNull();
		const reply = await replyRead(sandbox, trigger);
		// Four rooms written after the reply, in an order that is not their order of creation (so the rows on top show
		// that messages move rooms, and a poll may stop early): the reply's room is listed fifth, on the second page.
		const others = sandbox.state.rooms
			.filter((room) => room.roomId !== reply.roomId)
			.slice(10, 14)
			.map((room) => room.roomId);
		for (const roomId of [others[2], others[3], others[1], others[0]]) await change(sandbox, { kind: 'clientMessage', roomId });
		expect(storyIdsOf(await trigger.poll())).toHaveLength(4);
		const late = await change<{ storyId: string }>(sandbox, { kind: 'lateClientMessage', roomId: reply.roomId, beforeLastByMs: 14_000 });
		await control(sandbox, 'DELETE', 'requests');
		expect(await trigger.poll()).toBeNull();
		expect(await requestsTo(sandbox, '/v1/master-inbox/rooms')).toBe(1);
		await withDateAt(Date.now() + ALL_PAGES_AT_LEAST_EVERY_MS, async () => {
			expect(storyIdsOf(await trigger.poll())).toEqual([late.storyId]);
			expect(await trigger.poll()).toBeNull();
		});
	});
});

describe('The windows of ids read, within their total', () => {
	const floor = { at: new Date(0).toISOString(), uids: [] };
	/** A room with `size` ids read, one a second from `fromMs` on. */
	const roomOf = (name: string, size: number, fromMs: number) => ({
		seen: Object.fromEntries(Array.from({ length: size }, (_, i) => [`${name}-${i}`, fromMs + i * 1000])),
		seenFrom: floor,
	});

	it(`keeps every id while the inbox holds at most ${MAX_IDS_KEPT}`, () => {
		const rooms = { busy: roomOf('busy', MAX_IDS_PER_ROOM, 0), quiet: roomOf('quiet', 3, 0) };
		expect(windowsWithinTotal(rooms)).toBe(rooms);
	});

	it(`past ${MAX_IDS_KEPT}, drops the oldest ids beyond each room's newest ${MIN_IDS_PER_ROOM}, whichever room they are in, and raises that room's floor`, () => {
		const quietRooms = Object.fromEntries(Array.from({ length: MAX_IDS_KEPT / MIN_IDS_PER_ROOM - 3 }, (_, i) => [`q${i}`, roomOf(`q${i}`, MIN_IDS_PER_ROOM, 1_000_000)]));
		// An old busy room and a recent one: room for 20 ids beyond every room's minimum, and 2 x 480 such ids.
		const rooms: Record<string, ReturnType<typeof roomOf>> = { ...quietRooms, old: roomOf('old', MAX_IDS_PER_ROOM, 0), recent: roomOf('recent', MAX_IDS_PER_ROOM, 10_000_000) };
		const trimmed = windowsWithinTotal(rooms);
		const total = Object.values(trimmed).reduce((sum, room) => sum + Object.keys(room.seen).length, 0);
		expect(total).toBe(MAX_IDS_KEPT);
		expect(Object.keys(trimmed.old.seen)).toHaveLength(MIN_IDS_PER_ROOM);
		expect(Object.keys(trimmed.recent.seen)).toHaveLength(MIN_IDS_PER_ROOM * 2);
		// The recent room's floor: its newest id dropped, at its own time.
		const recentDropped = MAX_IDS_PER_ROOM - MIN_IDS_PER_ROOM * 2 - 1;
		expect(trimmed.recent.seenFrom).toEqual({ at: new Date(10_000_000 + recentDropped * 1000).toISOString(), uids: [`recent-${recentDropped}`] });
		expect(trimmed.q0).toBe(rooms.q0);
	});
});
