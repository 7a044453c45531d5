/**
 * The Message Trigger where the room list's row times have whole seconds while messages keep their
 * milliseconds (`roomRowTimes=seconds`), and every room shows one creation time (`roomCreation=together`),
 * under each order of the room list (issue 40), through n8n-core's engine against the sandbox. Date is
 * held at the start of a second, so the sandbox's clock gives each change the next millisecond: every
 * message below is written in that one second, before and after the activation, which the rows cannot
 * tell apart. Pages of 3 rooms.
 */
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { AgencyInboxMessageTrigger } from '../../../nodes/AgencyInboxMessageTrigger/AgencyInboxMessageTrigger.node';
import { DEFAULT_VARIANTS, type SandboxVariants } from '../../../sandbox';
import { TriggerWorkflow } from '../../helpers/engine';
import { sandboxControl } from '../../helpers/sandboxControl';
import { sandboxPerSuite } from '../../helpers/sandboxPerSuite';

type Story = { storyId: string; createdAt: string };

const PAGE_SIZE = 3;
const ROOM_SORTS: Array<SandboxVariants['roomSort']> = ['lastStoryAt', 'lastClientMessageAt', 'createdAt', 'lastSyncedAt'];
/** Only Date is faked, and held: the engine, the sandbox and its clock see one moment; timers stay real. */
const REAL_TIMERS = ['nextTick', 'setImmediate', 'clearImmediate', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'queueMicrotask', 'hrtime', 'performance'] as const;

/** The latest second the tests held Date at: the sandbox's clock may have given times in it that its data does not show (a request's). */
let latestSecondHeldMs = 0;

async function withDateAt<T>(nowMs: number, run: () => Promise<T>): Promise<T> {
	latestSecondHeldMs = Math.max(latestSecondHeldMs, nowMs);
	jest.useFakeTimers({ now: nowMs, doNotFake: [...REAL_TIMERS] });
	try {
		return await run();
	} finally {
		jest.useRealTimers();
	}
}

describe.each(ROOM_SORTS)('Agency Inbox Message Trigger, row times in whole seconds and rooms created together, rooms sorted by %s', (roomSort) => {
	const suite = sandboxPerSuite({ requestsPerMinute: 0, pageSize: PAGE_SIZE, maxPageSize: PAGE_SIZE, variants: { ...DEFAULT_VARIANTS, roomSort, roomRowTimes: 'seconds', roomCreation: 'together' } });

	const control = (method: string, path: string, body?: unknown) => sandboxControl<{ data: IDataObject }>(suite.sandbox.origin, method, path, body);
	const change = async <T>(body: IDataObject) => (await control('POST', 'changes', body)).data as T;
	const clientMessage = async (roomId: string) => await change<Story>({ kind: 'clientMessage', roomId });
	const clientMessages = async (roomId: string, count: number) => (await change<{ stories: Story[] }>({ kind: 'clientMessage', roomId, count })).stories;
	const storyIdsOf = (result: INodeExecutionData[][] | null) => (result?.[0] ?? []).map(({ json }) => (json.message as IDataObject).storyId as string);
	/** The latest time anywhere in the sandbox's data: its clock gives every change a time after the last one it gave, a message's or not. */
	const newestTimeAt = () => Math.max(...(JSON.stringify(suite.sandbox.state).match(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z/g) ?? []).map(Date.parse));
	const newTrigger = () =>
		new TriggerWorkflow({
			type: 'agencyInboxMessageTrigger',
			nodeType: new AgencyInboxMessageTrigger(),
			parameters: {},
			credentials: { agencyInboxApi: { apiKey: suite.sandbox.apiKey, baseUrl: suite.sandbox.url, requestsPerMinute: 100_000 } },
		});

	/** The start of a second after every time the sandbox gave (its data, the seconds Date was held at) and the real clock, with room for the changes of the test. */
	const nextWholeSecond = () => (Math.ceil(Math.max(Date.now(), newestTimeAt(), latestSecondHeldMs + 999) / 1000) + 1) * 1000;

	/** Rooms far apart in the list under every order: the 15th, 30th, 45th and 50th seeded. */
	const roomsApart = () => [14, 29, 44, 49].map((index) => suite.sandbox.state.rooms[index].roomId);

	it('emits nothing written before the activation in its second, and every later client message once, also in that second', async () => {
		const secondMs = nextWholeSecond();
		const [a, b, c, d] = roomsApart();
		const emitted: string[] = [];
		const expected: string[] = [];
		const trigger = newTrigger();
		await withDateAt(secondMs, async () => {
			// Before the activation, all in one second: two messages in b, one in c, the newest in a.
			await clientMessages(b, 2);
			await clientMessage(c);
			await clientMessage(a);
			expect(await trigger.poll()).toBeNull();

			// After it, in the same second: in b (whose row showed that second), and in d (whose row showed an older one).
			expected.push((await clientMessage(b)).storyId, (await clientMessage(d)).storyId);
			emitted.push(...storyIdsOf(await trigger.poll()));
			expect(emitted).toEqual(expected);

			// Two in one room in one second, and one in the same second as b's mark (its newest message read).
			expected.push(...(await clientMessages(a, 2)).map((story) => story.storyId), (await clientMessage(b)).storyId);
			emitted.push(...storyIdsOf(await trigger.poll()));
			expect(await trigger.poll()).toBeNull();
		});
		await withDateAt(secondMs + 1000, async () => {
			expected.push((await clientMessage(c)).storyId);
			emitted.push(...storyIdsOf(await trigger.poll()));
			expect(await trigger.poll()).toBeNull();
		});
		expect(emitted).toEqual(expected);
		// What the test rests on: every message above but the last was written in the one second.
		const written = Object.values(suite.sandbox.state.stories)
			.flat()
			.filter((story) => Date.parse(story.createdAt) >= secondMs);
		expect(written.filter((story) => Date.parse(story.createdAt) < secondMs + 1000)).toHaveLength(9);
	});

	it("a message synced late behind a read reply, written in the activation's second: never when before the activation, once when after", async () => {
		const secondMs = nextWholeSecond();
		const [a, b] = roomsApart();
		const trigger = newTrigger();
		await withDateAt(secondMs, async () => {
			const [first] = await clientMessages(b, 2);
			const newest = await clientMessage(a);
			expect(await trigger.poll()).toBeNull();
			await change({ kind: 'agencyMessage', roomId: b });
			expect(await trigger.poll()).toBeNull();
			// One written with b's first message, before the activation; one after the newest message at the activation.
			await change({ kind: 'lateClientMessage', roomId: b, createdAt: first.createdAt });
			const late = await change<Story>({ kind: 'lateClientMessage', roomId: b, createdAt: new Date(Date.parse(newest.createdAt) + 1).toISOString() });
			expect(storyIdsOf(await trigger.poll())).toEqual([late.storyId]);
			expect(await trigger.poll()).toBeNull();
			expect(Date.parse(late.createdAt)).toBeLessThan(secondMs + 1000);
		});
	});
});
