/**
 * The Message Trigger where one poll cannot read the whole room list (issue 40, costs that come back
 * and reach the end), through n8n-core's engine against the sandbox over HTTP: a poll cut at its
 * deadline goes on where it stopped, early stops come back after a contradiction, an activation cut at
 * its deadline emits nothing from before it, and a saved cursor the service refuses starts the sweep
 * again. Pages of 3 rooms (60 rooms: 20 pages). Where a deadline matters, n8n's clock moves on by a
 * fixed step with each page of rooms the service answers (a loopback proxy in front of the sandbox
 * moves jest's fake Date; timers stay real), so what a deadline cuts does not depend on the machine.
 */
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { AgencyInboxMessageTrigger } from '../../../nodes/AgencyInboxMessageTrigger/AgencyInboxMessageTrigger.node';
import { ACTIVATION_PAGING_MS } from '../../../nodes/AgencyInboxMessageTrigger/activation';
import { resetProcessMemory } from '../../../nodes/shared/processMemory';
import { DEFAULT_VARIANTS, startSandbox, type SandboxVariants } from '../../../sandbox';
import { TriggerWorkflow } from '../../helpers/engine';
import { sandboxControl } from '../../helpers/sandboxControl';
import { LoopbackProxy } from '../AgencyInboxProposalTrigger/loopbackProxy';
import { messageState } from './roomProposalsHelpers';

type Sandbox = Awaited<ReturnType<typeof startSandbox>>;

const PAGE_SIZE = 3;
const ROOMS_PATH = '/v1/master-inbox/rooms';
/** The first page of rooms: requested without a cursor. */
const TOP = 'top';
/**
 * n8n's clock per page of rooms in a poll: a poll pages for half of n8n's 5-minute poll budget, so it
 * reads 5 pages of rooms (the story reads in between take no time on this clock).
 */
const POLL_STEP_MS = 30_000;
/** The same for the activation, which pages for ACTIVATION_PAGING_MS (20 s): 3 pages. */
const ACTIVATION_STEP_MS = 7_500;
/** Only Date is faked: the engine, the sandbox and its clock see the time move; timers stay real. */
const REAL_TIMERS = ['nextTick', 'setImmediate', 'clearImmediate', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'queueMicrotask', 'hrtime', 'performance'] as const;

interface RequestLogEntry {
	method: string;
	path: string;
	query: Record<string, string>;
	status: number;
}

/** One poll as the test saw it: the client messages it emitted and the pages of rooms it asked for (by cursor, TOP for the first). */
interface PollSeen {
	emitted: string[];
	roomPages: string[];
}

describe('Agency Inbox Message Trigger where one poll cannot read every page of rooms', () => {
	let sandbox: Sandbox;
	let proxy: LoopbackProxy;
	/** n8n's clock step per page of rooms; 0: the clock stands still. */
	let stepMs = 0;
	/** When each page of rooms was asked for, before the step. */
	let roomPagesAskedAt: number[] = [];
	/** A cursor the proxy turns, once, into one the service refuses (as a service refuses one it no longer takes). */
	let cursorToRefuse: string | undefined;

	beforeAll(async () => {
		sandbox = await startSandbox({ requestsPerMinute: 0, pageSize: PAGE_SIZE, maxPageSize: PAGE_SIZE });
		proxy = new LoopbackProxy(sandbox.origin);
		await proxy.start();
		proxy.beforeForward = async ({ path, query }) => {
			if (!path.endsWith(ROOMS_PATH)) return;
			roomPagesAskedAt.push(Date.now());
			jest.setSystemTime(Date.now() + stepMs);
			if (cursorToRefuse === undefined || query.get('pageCursor') !== cursorToRefuse) return;
			// Once: the sandbox's cursors are keyset positions, so the sweep started again is issued the same one.
			cursorToRefuse = undefined;
			query.set('pageCursor', 'no-longer-taken');
			return query;
		};
	});

	afterAll(async () => {
		await proxy.close();
		await sandbox.close();
	});

	beforeEach(async () => {
		resetProcessMemory();
		await control('POST', 'variants', DEFAULT_VARIANTS);
		await control('POST', 'reset');
		stepMs = 0;
		roomPagesAskedAt = [];
		cursorToRefuse = undefined;
		jest.useFakeTimers({ now: Date.now(), doNotFake: [...REAL_TIMERS] });
	});

	afterEach(() => {
		jest.useRealTimers();
	});

	const control = (method: string, path: string, body?: unknown) => sandboxControl<{ data: IDataObject }>(sandbox.origin, method, path, body);
	const change = async <T = IDataObject>(body: IDataObject) => (await control('POST', 'changes', body)).data as T;
	const useOrder = (roomSort: SandboxVariants['roomSort']) => control('POST', 'variants', { roomSort });
	const storyIdsOf = (result: INodeExecutionData[][] | null) => (result?.[0] ?? []).map(({ json }) => (json.message as IDataObject).storyId as string);
	const clientMessage = async (roomId: string) => (await change<{ storyId: string }>({ kind: 'clientMessage', roomId })).storyId;
	const pageCount = () => Math.ceil(sandbox.state.rooms.length / PAGE_SIZE);
	const sweepInProgress = (trigger: TriggerWorkflow) => messageState(trigger)?.sweep as { cursor: string; startedAt: string } | undefined;
	const requests = async () => (await control('GET', 'requests')).data as unknown as RequestLogEntry[];

	/** Room ids as the list sorted by creation shows them: newest first, the room id breaking ties. */
	const inCreationOrder = () =>
		[...sandbox.state.rooms].sort((a, b) => b.createdAtDateTime.localeCompare(a.createdAtDateTime) || b.roomId.localeCompare(a.roomId)).map((room) => room.roomId);

	const newTrigger = () =>
		new TriggerWorkflow({
			type: 'agencyInboxMessageTrigger',
			nodeType: new AgencyInboxMessageTrigger(),
			parameters: {},
			credentials: { agencyInboxApi: { apiKey: sandbox.apiKey, baseUrl: `${proxy.origin}${new URL(sandbox.url).pathname}`, requestsPerMinute: 100_000 } },
		});

	/** One poll, with what it emitted and the pages of rooms it asked the service for. */
	async function pollSeen(trigger: TriggerWorkflow): Promise<PollSeen> {
		await control('DELETE', 'requests');
		const emitted = storyIdsOf(await trigger.poll());
		const roomPages = (await requests()).filter((request) => request.path === ROOMS_PATH).map((request) => request.query.pageCursor ?? TOP);
		return { emitted, roomPages };
	}

	/** Polls until the sweep in progress is complete (none left in the state), at most `limit` polls. */
	async function pollsOfOneSweep(trigger: TriggerWorkflow, limit = 2 * pageCount()): Promise<PollSeen[]> {
		const polls: PollSeen[] = [];
		do polls.push(await pollSeen(trigger));
		while (sweepInProgress(trigger) !== undefined && polls.length < limit);
		expect(sweepInProgress(trigger)).toBeUndefined();
		return polls;
	}

	/** Activates a trigger with n8n's clock standing still: the activation reads every page it needs. */
	async function activatedTrigger(): Promise<TriggerWorkflow> {
		const trigger = newTrigger();
		expect(await trigger.poll()).toBeNull();
		expect(sweepInProgress(trigger)).toBeUndefined();
		return trigger;
	}

	/** Each page below the first asked for once across the polls of a sweep, every one of them reached. */
	function expectEachPageOnce(polls: PollSeen[]): void {
		const belowTheFirst = polls.flatMap((poll) => poll.roomPages).filter((page) => page !== TOP);
		expect(new Set(belowTheFirst).size).toBe(belowTheFirst.length);
		expect(belowTheFirst).toHaveLength(pageCount() - 1);
	}

	it('a poll cut at its deadline resumes where it stopped: a message in the last room of a list sorted by creation arrives within 1 + ceil((pages - k) / (k - 1)) polls, once, each page read once per sweep', async () => {
		await useOrder('createdAt');
		const trigger = await activatedTrigger();
		stepMs = POLL_STEP_MS;
		const written = await clientMessage(inCreationOrder().at(-1)!);

		const sweep = await pollsOfOneSweep(trigger);
		const pagesPerPoll = sweep[0].roomPages.length;
		expect(pagesPerPoll).toBe(5);
		expect(sweep).toHaveLength(1 + Math.ceil((pageCount() - pagesPerPoll) / (pagesPerPoll - 1)));
		expect(sweep.flatMap((poll) => poll.emitted)).toEqual([written]);
		expect(sweep.at(-1)!.emitted).toEqual([written]);
		expectEachPageOnce(sweep);
		// Every later poll read the top first (new activity in an order that moves with messages shows
		// there); the one that ended the sweep read it again at the end.
		expect(sweep.flatMap((poll) => poll.roomPages).filter((page) => page === TOP)).toHaveLength(sweep.length + 1);

		// The next sweep, from the top: nothing again.
		const next = await pollsOfOneSweep(trigger);
		expect(next.flatMap((poll) => poll.emitted)).toEqual([]);
		expectEachPageOnce(next);
	});

	it('after a contradiction (a message synced late below the floor) the polls read every page until one reads every page without one; then an idle poll reads one page of rooms', async () => {
		const trigger = await activatedTrigger();
		const byLastMessage = [...sandbox.state.rooms].sort((a, b) => (b.lastStoryAt ?? '').localeCompare(a.lastStoryAt ?? '')).map((room) => room.roomId);
		const first = await clientMessage(byLastMessage[30]);
		expect(await pollSeen(trigger)).toMatchObject({ emitted: [first] });
		const firstAt = Date.parse(sandbox.state.stories[byLastMessage[30]].at(-1)!.createdAt);
		// Written just before the message the last poll read (the floor), listed second: below the floor, unread.
		const late = await change<{ storyId: string }>({ kind: 'lateClientMessage', roomId: byLastMessage[40], createdAt: new Date(firstAt - 1).toISOString() });

		const contradicted = await pollSeen(trigger);
		expect(contradicted.emitted).toEqual([late.storyId]);
		// Every page, then the first again.
		expect(contradicted.roomPages).toHaveLength(pageCount() + 1);
		expect(messageState(trigger)?.mustReadAllPages).toBe(true);

		const clean = await pollSeen(trigger);
		expect(clean.emitted).toEqual([]);
		expect(clean.roomPages).toHaveLength(pageCount() + 1);
		expect(messageState(trigger)?.mustReadAllPages).toBe(false);

		expect(await pollSeen(trigger)).toEqual({ emitted: [], roomPages: [TOP] });
	});

	it(`an activation cut at its deadline (${ACTIVATION_PAGING_MS / 1000} s of paging): nothing written before it is emitted, though newer than every message it read; a message after it in a room past the cut arrives once`, async () => {
		await useOrder('createdAt');
		const order = inCreationOrder();
		const pastTheCut = [order.at(-1)!, order[30]];
		const before: string[] = [];
		for (const roomId of pastTheCut) before.push(await clientMessage(roomId));
		// The activation starts after them.
		jest.setSystemTime(Date.now() + 1_000);
		stepMs = ACTIVATION_STEP_MS;
		const activationStartedAt = Date.now();
		const trigger = newTrigger();
		expect(await trigger.poll()).toBeNull();

		const activationPages = roomPagesAskedAt.length;
		expect(activationPages).toBe(3);
		for (const askedAt of roomPagesAskedAt) expect(askedAt - activationStartedAt).toBeLessThan(ACTIVATION_PAGING_MS);
		expect(sweepInProgress(trigger)).toBeDefined();
		// The rows it read show no message as new as those written before it: only its start tells they are history.
		const newestRead = Math.max(...order.slice(0, activationPages * PAGE_SIZE).map((roomId) => Date.parse(sandbox.state.rooms.find((room) => room.roomId === roomId)!.lastStoryAt ?? '')));
		for (const [index, roomId] of pastTheCut.entries()) {
			const written = sandbox.state.stories[roomId].find((story) => story.storyId === before[index])!;
			expect(Date.parse(written.createdAt)).toBeGreaterThan(newestRead);
		}

		stepMs = POLL_STEP_MS;
		const after = await clientMessage(order.at(-1)!);
		const sweep = await pollsOfOneSweep(trigger);
		const pagesPerPoll = sweep[0].roomPages.length;
		// Each poll reads the top and goes on from the cut: pages - 3 pages left, k - 1 a poll.
		expect(sweep).toHaveLength(Math.ceil((pageCount() - activationPages) / (pagesPerPoll - 1)));
		expect(sweep.flatMap((poll) => poll.emitted)).toEqual([after]);

		const next = await pollsOfOneSweep(trigger);
		expect(next.flatMap((poll) => poll.emitted)).toEqual([]);
	});

	it.each([
		['behind', -120_000],
		['ahead of', 120_000],
	])("an activation cut at its deadline, the service's clock 2 minutes %s n8n's: its history line is the service's time (the Date header), so nothing before it arrives and nothing after it is lost", async (_label, offsetMs) => {
		await useOrder('createdAt');
		await control('POST', 'clock', { offsetMs });
		const order = inCreationOrder();
		const before = await clientMessage(order.at(-1)!);
		jest.setSystemTime(Date.now() + 1_000);
		stepMs = ACTIVATION_STEP_MS;
		const trigger = newTrigger();
		expect(await trigger.poll()).toBeNull();
		expect(sweepInProgress(trigger)).toBeDefined();

		stepMs = POLL_STEP_MS;
		const after = await clientMessage(order.at(-1)!);
		const emitted = (await pollsOfOneSweep(trigger)).flatMap((poll) => poll.emitted);
		expect({ before: emitted.includes(before), after: emitted.filter((storyId) => storyId === after).length }).toEqual({ before: false, after: 1 });
		expect(emitted).toEqual([after]);
	});

	it('a saved cursor the service refuses (400) starts the sweep again from the top; no message is lost', async () => {
		await useOrder('createdAt');
		const trigger = await activatedTrigger();
		stepMs = POLL_STEP_MS;
		expect(await pollSeen(trigger)).toMatchObject({ emitted: [] });
		const saved = sweepInProgress(trigger)!;
		expect(saved).toBeDefined();
		const order = inCreationOrder();
		// One in a room the cut sweep has passed (page 3), one in the last room, past its cursor.
		const passed = await clientMessage(order[2 * PAGE_SIZE]);
		const ahead = await clientMessage(order.at(-1)!);
		cursorToRefuse = saved.cursor;
		jest.setSystemTime(Date.now() + 60_000);

		const refused = await pollSeen(trigger);
		expect((await requests()).filter((request) => request.path === ROOMS_PATH && request.status === 400)).toHaveLength(1);
		// Read again from the top in the same poll: the room the old sweep had passed is read now.
		expect(refused.emitted).toEqual([passed]);
		expect(Date.parse(sweepInProgress(trigger)!.startedAt)).toBeGreaterThan(Date.parse(saved.startedAt));

		const rest = await pollsOfOneSweep(trigger);
		expect(rest.flatMap((poll) => poll.emitted)).toEqual([ahead]);
		const next = await pollsOfOneSweep(trigger);
		expect(next.flatMap((poll) => poll.emitted)).toEqual([]);
	});
});
