/**
 * Start From: A Date on the Message Trigger, through n8n-core's poll context against the sandbox: the
 * client messages written since the date and before the activation are handed on once, in runs of at
 * most 100, beside the live messages; a restart, a date moved and Now change nothing handed on.
 */
import type { IDataObject, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { AgencyInboxMessageTrigger } from '../../../nodes/AgencyInboxMessageTrigger/AgencyInboxMessageTrigger.node';
import { BACKFILL_REQUESTS_PER_POLL } from '../../../nodes/AgencyInboxMessageTrigger/backfill';
import { resetProcessMemory } from '../../../nodes/shared/processMemory';
import { BACKFILL_RUN_SIZE } from '../../../nodes/shared/startFrom';
import { DEFAULT_VARIANTS, SINGLE_READINGS, startSandbox } from '../../../sandbox';
import { TriggerWorkflow } from '../../helpers/engine';
import { activationMoment, pollUntilBackfilled, since } from '../../helpers/backfill';
import { sandboxControl } from '../../helpers/sandboxControl';
import { apiClient } from '../../sandbox/client';

type Sandbox = Awaited<ReturnType<typeof startSandbox>>;

const DAY_MS = 86_400_000;
const control = (sandbox: Sandbox, method: string, path: string, body?: unknown) => sandboxControl<IDataObject>(sandbox.origin, method, path, body);

/** Readings where the backfill's sweep meets another list order, row time or story order. */
const READINGS = SINGLE_READINGS.filter(({ label }) => [
		'default',
		'roomSort=createdAt',
		'roomSort=lastSyncedAt',
		'storyOrder=oldestFirst',
		'roomRowTimes=seconds',
		'authorIds=marketplaceUserId',
		'unnamedQueryParameters=rejected',
		'listCursors=offsets',
	].includes(label));

function triggerFor(sandbox: Sandbox, parameters: INodeParameters, staticData?: IDataObject, timezone?: string) {
	return new TriggerWorkflow(
		{
			type: 'agencyInboxMessageTrigger',
			nodeType: new AgencyInboxMessageTrigger(),
			parameters,
			timezone,
			credentials: { agencyInboxApi: { apiKey: sandbox.apiKey, baseUrl: sandbox.url, requestsPerMinute: 10_000 } },
		},
		staticData,
	);
}

interface Handed {
	storyId: string;
	createdAt: string;
	backfilled: boolean;
	notice?: string;
}

const handed = (result: INodeExecutionData[][] | null): Handed[] =>
	(result?.[0] ?? []).map(({ json }) => {
		const message = json.message as IDataObject;
		return { storyId: String(message.storyId), createdAt: String(message.createdAt), backfilled: json.backfilled as boolean, notice: json.backfillNotice as string | undefined };
	});

/** The client messages the sandbox holds written in [fromMs, toMs], by id. */
function clientMessagesWritten(sandbox: Sandbox, fromMs: number, toMs: number): string[] {
	const members = new Set(sandbox.state.members.map((member) => member.uid));
	return Object.values(sandbox.state.stories)
		.flat()
		.filter((story) => !members.has(story.userId) && Date.parse(story.createdAt) >= fromMs && Date.parse(story.createdAt) <= toMs)
		.map((story) => story.storyId)
		.sort();
}


/** Polls until the pass is over; every poll's items. */
const backfillOf = async (trigger: TriggerWorkflow) => await pollUntilBackfilled(trigger, { key: 'messages', nested: true }, handed);

const ids = (items: Handed[]) => items.map((item) => item.storyId).sort();

describe.each(READINGS.map(({ label, variants }) => [label, variants] as const))('Message Trigger, Start From: A Date, reading %s', (_label, variants) => {
	let sandbox: Sandbox;

	beforeAll(async () => {
		sandbox = await startSandbox({ requestsPerMinute: 0, pageSize: 7, maxPageSize: 100, variants });
	});

	afterAll(async () => {
		await sandbox.close();
	});

	beforeEach(async () => {
		resetProcessMemory();
		await control(sandbox, 'POST', 'reset');
		// 600 messages over the last 20 days, about half of them clients'.
		await control(sandbox, 'POST', 'changes', { kind: 'recentHistory', messages: 600, days: 20 });
	});

	it('hands on every client message since the date once, none older, in runs of at most 100, oldest first within each, beside the live ones', async () => {
		const parameters = since(10);
		const trigger = triggerFor(sandbox, parameters);
		expect(await trigger.poll()).toBeNull();
		const activatedAt = await activationMoment();
		const live = (await control(sandbox, 'POST', 'changes', { kind: 'clientMessage', roomId: 'room-004', text: 'written during the backfill' })).data as { storyId: string };
		const polls = await backfillOf(trigger);
		const all = polls.flat();
		const backfilled = all.filter((item) => item.backfilled);
		expect(ids(backfilled)).toEqual(clientMessagesWritten(sandbox, Date.parse(parameters.startDate), activatedAt));
		expect(new Set(ids(all)).size).toBe(all.length);
		for (const items of polls) {
			expect(items.filter((item) => item.backfilled).length).toBeLessThanOrEqual(BACKFILL_RUN_SIZE);
			const times = items.filter((item) => item.backfilled).map((item) => Date.parse(item.createdAt));
			expect(times).toEqual([...times].sort((a, b) => a - b));
		}
		// The live message came with the first poll after it, before the backfill's items of that poll.
		expect(polls[0][0]).toMatchObject({ storyId: live.storyId, backfilled: false });
		expect(all.filter((item) => !item.backfilled).map((item) => item.storyId)).toEqual([live.storyId]);
		expect(backfilled.every((item) => item.notice === undefined)).toBe(true);
		expect(await trigger.poll()).toBeNull();
	});

	it('begins at most a few requests a poll beyond the live part', async () => {
		const trigger = triggerFor(sandbox, since(20));
		expect(await trigger.poll()).toBeNull();
		const liveOnly = triggerFor(sandbox, { startFrom: 'now' });
		expect(await liveOnly.poll()).toBeNull();
		for (let i = 0; i < 5; i++) {
			await control(sandbox, 'DELETE', 'requests');
			await liveOnly.poll();
			const liveRequests = ((await control(sandbox, 'GET', 'requests')).data as unknown[]).length;
			await control(sandbox, 'DELETE', 'requests');
			await trigger.poll();
			const requests = ((await control(sandbox, 'GET', 'requests')).data as unknown[]).length;
			// A room begun is read to its end (its pages at the smallest page size), and the proposals may need a sweep of the changes.
			const longestRoom = Math.max(...Object.values(sandbox.state.stories).map((stories) => Math.ceil(stories.length / 7)));
			expect(requests - liveRequests).toBeLessThanOrEqual(BACKFILL_REQUESTS_PER_POLL - 1 + longestRoom + 3);
		}
	});

	it('a restart in the middle goes on from the committed state: nothing lost, nothing twice', async () => {
		const parameters = since(15);
		const first = triggerFor(sandbox, parameters);
		expect(await first.poll()).toBeNull();
		const activatedAt = await activationMoment();
		const before = [...handed(await first.poll()), ...handed(await first.poll())];
		expect(before.length).toBeGreaterThan(0);
		// Another process: its own memory, the state n8n committed with the runs.
		resetProcessMemory();
		const second = triggerFor(sandbox, parameters, first.staticData());
		const after = (await backfillOf(second)).flat();
		expect([...ids(before), ...ids(after)].sort()).toEqual(clientMessagesWritten(sandbox, Date.parse(parameters.startDate), activatedAt));
	});

	it('the same date again hands on nothing more; an earlier date only what lies between, and says so; Now pauses', async () => {
		const later = since(5);
		const trigger = triggerFor(sandbox, later);
		expect(await trigger.poll()).toBeNull();
		const activatedAt = await activationMoment();
		const first = (await backfillOf(trigger)).flat();
		expect(ids(first)).toEqual(clientMessagesWritten(sandbox, Date.parse(later.startDate), activatedAt));

		const republished = triggerFor(sandbox, later, trigger.staticData());
		expect(await republished.poll()).toBeNull();

		const paused = triggerFor(sandbox, { startFrom: 'now' }, trigger.staticData());
		expect(await paused.poll()).toBeNull();

		const earlier = since(12);
		const widened = triggerFor(sandbox, earlier, trigger.staticData());
		const second = (await backfillOf(widened)).flat();
		expect(ids(second)).toEqual(clientMessagesWritten(sandbox, Date.parse(earlier.startDate), Date.parse(later.startDate) - 1));
		expect(second.every((item) => item.notice?.includes('Start From moved to'))).toBe(true);
	});

	it('Fetch Test Event shows one backfilled message; a date in the future or too far back fails before any request', async () => {
		const sample = handed(await triggerFor(sandbox, since(20)).poll('manual'));
		expect(sample).toHaveLength(1);
		expect(sample[0].backfilled).toBe(true);

		await control(sandbox, 'DELETE', 'requests');
		await expect(triggerFor(sandbox, { startFrom: 'date', startDate: new Date(Date.now() + DAY_MS).toISOString() }).poll()).rejects.toThrow(/in the future/);
		await expect(triggerFor(sandbox, since(91)).poll()).rejects.toThrow(/more than 90 days back/);
		await expect(triggerFor(sandbox, { startFrom: 'date', startDate: 'last tuesday' }).poll('manual')).rejects.toThrow(/is not a date and time/);
		expect((await control(sandbox, 'GET', 'requests')).data).toEqual([]);
	});
});

describe('Message Trigger, Start From: A Date, a room that fails', () => {
	let sandbox: Sandbox;

	beforeAll(async () => {
		sandbox = await startSandbox({ requestsPerMinute: 0, pageSize: 7, maxPageSize: 100 });
	});

	afterAll(async () => {
		await sandbox.close();
	});

	beforeEach(async () => {
		resetProcessMemory();
		await control(sandbox, 'POST', 'reset');
		await control(sandbox, 'POST', 'changes', { kind: 'recentHistory', messages: 300, days: 10, rooms: 12 });
	});

	const storiesOf = (roomId: string) => `/v1/master-inbox/rooms/${roomId}/stories`;

	it('once: read again by the next sweep, nothing lost or repeated', async () => {
		const parameters = since(10);
		const trigger = triggerFor(sandbox, parameters);
		expect(await trigger.poll()).toBeNull();
		const activatedAt = await activationMoment();
		await control(sandbox, 'POST', 'faults', { method: 'GET', pathPrefix: storiesOf('room-003'), status: 503, count: 3 });
		const all = (await backfillOf(trigger)).flat();
		expect(ids(all)).toEqual(clientMessagesWritten(sandbox, Date.parse(parameters.startDate), activatedAt));
		expect(all.every((item) => item.notice === undefined)).toBe(true);
	});

	it('for good: holds back no other room, is left out after a few reads, and the items say so', async () => {
		const parameters = since(10);
		const trigger = triggerFor(sandbox, parameters);
		expect(await trigger.poll()).toBeNull();
		const activatedAt = await activationMoment();
		await control(sandbox, 'POST', 'faults', { method: 'GET', pathPrefix: storiesOf('room-003'), status: 403, count: 100_000 });
		const all = (await backfillOf(trigger)).flat();
		const ofRoom3 = new Set(sandbox.state.stories['room-003'].map((story) => story.storyId));
		expect(ids(all)).toEqual(clientMessagesWritten(sandbox, Date.parse(parameters.startDate), activatedAt).filter((storyId) => !ofRoom3.has(storyId)));
		expect(all.some((item) => item.notice?.includes('left them out: room-003'))).toBe(true);
	});
});

describe('Message Trigger, Start From: A Date, cursors that count rows (listCursors=offsets)', () => {
	let sandbox: Sandbox;

	beforeAll(async () => {
		// Pages of 7 rooms: the 60 rooms are 9 pages, the history's 12 rooms the last two.
		sandbox = await startSandbox({ requestsPerMinute: 0, pageSize: 7, maxPageSize: 7, variants: { ...DEFAULT_VARIANTS, listCursors: 'offsets' } });
	});

	afterAll(async () => {
		await sandbox.close();
	});

	/** The pass's progress as the trigger saved it. */
	const progressOf = (trigger: TriggerWorkflow) => {
		const state = Object.values(trigger.staticData()).find((data) => (data as IDataObject | undefined)?.messages !== undefined) as { messages: { backfill?: { pass?: { progress: { cursor?: string; done: string[] } } } } } | undefined;
		return state?.messages.backfill?.pass?.progress;
	};
	/** The rooms of the sweep's page at `pageCursor`, as the service lists them now. */
	const roomsPage = async (pageCursor: string) =>
		(await apiClient(sandbox).get<{ data: Array<{ roomId: string }> }>('/v1/master-inbox/rooms', { sort: 'date-asc', pageSize: 100, pageCursor })).body.data.map((row) => row.roomId);

	it('a room that slides past the sweep\'s cursor (another room moved behind it) is read by the second sweep: nothing lost or repeated', async () => {
		resetProcessMemory();
		await control(sandbox, 'POST', 'reset');
		await control(sandbox, 'POST', 'changes', { kind: 'recentHistory', messages: 300, days: 10, rooms: 12 });
		const parameters = since(10);
		const trigger = triggerFor(sandbox, parameters);
		expect(await trigger.poll()).toBeNull();
		const activatedAt = await activationMoment();
		const owed = clientMessagesWritten(sandbox, Date.parse(parameters.startDate), activatedAt);
		const roomsOwed = new Set(Object.entries(sandbox.state.stories).filter(([, stories]) => stories.some((story) => owed.includes(story.storyId))).map(([roomId]) => roomId));

		// Polls until the sweep's next page begins with a room it owes and has not read.
		const polls: Handed[][] = [];
		let slid: string | undefined;
		for (let poll = 0; poll < 40 && slid === undefined; poll++) {
			polls.push(handed(await trigger.poll()));
			const progress = progressOf(trigger);
			if (progress?.cursor === undefined) continue;
			const [first] = await roomsPage(progress.cursor);
			if (roomsOwed.has(first) && !progress.done.includes(first)) slid = first;
		}
		expect(slid).toBeDefined();
		const cursor = progressOf(trigger)!.cursor!;
		// A client writes in the room the list shows first: it moves to the end, the rooms after it one up.
		const [oldest] = sandbox.state.rooms.filter((room) => room.lastStoryAt !== null).sort((a, b) => a.lastStoryAt!.localeCompare(b.lastStoryAt!) || a.roomId.localeCompare(b.roomId));
		const live = (await control(sandbox, 'POST', 'changes', { kind: 'clientMessage', roomId: oldest.roomId, text: 'moves its room to the end' })).data as { storyId: string };
		expect(await roomsPage(cursor)).not.toContain(slid);

		polls.push(...(await backfillOf(trigger)));
		const all = polls.flat();
		expect(ids(all.filter((item) => item.backfilled))).toEqual(owed);
		expect(all.filter((item) => !item.backfilled).map((item) => item.storyId)).toEqual([live.storyId]);
	});
});

describe('Message Trigger, Start From: a date without a zone', () => {
	let sandbox: Sandbox;

	beforeAll(async () => {
		sandbox = await startSandbox({ requestsPerMinute: 0 });
	});

	afterAll(async () => {
		await sandbox.close();
	});

	it("is read in the workflow's time zone", async () => {
		resetProcessMemory();
		const trigger = triggerFor(sandbox, { startFrom: 'date', startDate: '2026-01-01T00:00:00' }, undefined, 'Asia/Tokyo');
		await expect(trigger.poll()).rejects.toThrow('2025-12-31T15:00:00.000Z is more than 90 days back');
	});
});
