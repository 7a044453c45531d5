/** The one owner of what the nodes keep in a process: keys, lifetimes, bounds, the release and the reset. */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

import { HookContext } from 'n8n-core';

import { AgencyInboxInvitationTrigger } from '../../../nodes/AgencyInboxInvitationTrigger/AgencyInboxInvitationTrigger.node';
import { AgencyInboxTrigger } from '../../../nodes/AgencyInboxTrigger/AgencyInboxTrigger.node';
import { registerTrigger } from '../../../nodes/AgencyInboxTrigger/onceOnly/listeningSessions';
import { longestPollGapMs, pollMemoryKeptMs } from '../../../nodes/shared/guardedPoll';
import { processMemoryStores, processMemoryTiming, processStore, releaseNode, resetProcessMemory, type StoreRules } from '../../../nodes/shared/processMemory';
import { startSandbox } from '../../../sandbox';
import { TriggerWorkflow } from '../../helpers/engine';
import { newSigningSecret, signDelivery } from '../AgencyInboxTrigger/signedDeliveries';
import { deliver, triggerWith } from '../AgencyInboxTrigger/webhookRequests';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const realClock = processMemoryTiming.now;
const realSweep = processMemoryTiming.sweepEveryMs;
let clockAheadMs = 0;

beforeAll(() => {
	processMemoryTiming.now = () => realClock() + clockAheadMs;
	processMemoryTiming.sweepEveryMs = 0;
});

afterAll(() => {
	processMemoryTiming.now = realClock;
	processMemoryTiming.sweepEveryMs = realSweep;
});

beforeEach(() => {
	resetProcessMemory();
	clockAheadMs = 0;
});

let stores = 0;
const storeWith = <Value>(rules: Partial<StoreRules<Value>>) =>
	processStore<Value>({ name: `test store ${++stores}`, belongsTo: 'a test', lifetime: 'a test', keptMs: MINUTE, renewedOnUse: false, maxEntries: 100, ...rules });

const entriesOf = (name: string) => processMemoryStores().find((store) => store.name === name)?.entries;

describe('a process store', () => {
	const production = { workflow: 'w1', node: 'n1', url: 'production' } as const;
	const test = { ...production, url: 'test' } as const;

	it('keeps the Test URL and the Production URL of a node apart, and releases one URL, or both, of one node only', () => {
		const store = storeWith<string>({});
		const otherNode = { ...production, node: 'n2' };
		store.set(production, 'production key', 'credential-1');
		store.set(test, 'test key', 'credential-1');
		store.set(otherNode, 'other node');
		expect(store.get(production, 'credential-1')).toBe('production key');
		expect(store.get(test, 'credential-1')).toBe('test key');
		expect(store.get(production, 'credential-2')).toBeUndefined();

		releaseNode({ workflow: 'w1', node: 'n1', url: 'test' });
		expect(store.get(test, 'credential-1')).toBeUndefined();
		expect(store.get(production, 'credential-1')).toBe('production key');
		releaseNode({ workflow: 'w1', node: 'n1' });
		expect(store.get(production, 'credential-1')).toBeUndefined();
		expect(store.get(otherNode)).toBe('other node');
	});

	it('releases an entry in use once it is not in use any more, not before', () => {
		const store = storeWith<{ runs: number }>({ keptMs: HOUR, inUse: (value) => value.runs > 0 });
		const running = store.set(production, { runs: 1 });
		releaseNode({ workflow: 'w1', node: 'n1', url: 'production' });
		expect(store.get(production)).toBe(running);
		running.runs = 0;
		expect(store.get(production)).toBeUndefined();
	});

	it('lets an entry go its lifetime after it was written, or after its last use where uses renew it', () => {
		const written = storeWith<string>({ keptMs: MINUTE });
		const renewed = storeWith<string>({ keptMs: MINUTE, renewedOnUse: true });
		written.set({ execution: 'e1' }, 'a');
		renewed.set({ execution: 'e1' }, 'a');
		clockAheadMs = 50_000;
		expect(written.get({ execution: 'e1' })).toBe('a');
		expect(renewed.get({ execution: 'e1' })).toBe('a');
		clockAheadMs = 61_000;
		expect(written.get({ execution: 'e1' })).toBeUndefined();
		expect(renewed.get({ execution: 'e1' })).toBe('a');
		clockAheadMs = 122_000;
		expect(renewed.get({ execution: 'e1' })).toBeUndefined();
	});

	it('lets expired entries of every store go when any store is used, but none in use', () => {
		const idle = storeWith<number>({ keptMs: MINUTE });
		const busy = storeWith<{ waiting: boolean }>({ keptMs: MINUTE, inUse: (value) => value.waiting });
		const other = storeWith<number>({ keptMs: HOUR });
		for (let index = 0; index < 5; index++) idle.set({ apiKey: `k${index}` }, index);
		const waiting = busy.set({ apiKey: 'k' }, { waiting: true });
		clockAheadMs = 2 * MINUTE;
		other.set({ apiKey: 'k' }, 1);
		expect([entriesOf(idle.rules.name), entriesOf(busy.rules.name), entriesOf(other.rules.name)]).toEqual([0, 1, 1]);
		waiting.waiting = false;
		other.get({ apiKey: 'k' });
		expect(entriesOf(busy.rules.name)).toBe(0);
	});

	it('is bounded in entries: the least recently used entry that is not in use goes first', () => {
		const store = storeWith<{ inUse: boolean }>({ maxEntries: 3, inUse: (value) => value.inUse });
		store.set({ apiKey: 'a' }, { inUse: true });
		store.set({ apiKey: 'b' }, { inUse: false });
		store.set({ apiKey: 'c' }, { inUse: false });
		store.get({ apiKey: 'b' });
		store.set({ apiKey: 'd' }, { inUse: false });
		expect(['a', 'b', 'c', 'd'].filter((key) => store.get({ apiKey: key }) !== undefined)).toEqual(['a', 'b', 'd']);
		expect(store.size).toBe(3);
	});

	it('one reset empties every store', () => {
		const first = storeWith<number>({});
		const second = storeWith<number>({});
		first.set({ apiKey: 'k' }, 1);
		second.set({ execution: 'e' }, 2);
		resetProcessMemory();
		expect([first.size, second.size]).toEqual([0, 0]);
	});
});

describe('the stores of the nodes', () => {
	it('every one states what it belongs to, its lifetime and its bound', () => {
		const named = processMemoryStores().filter((store) => !store.name.startsWith('test store'));
		expect(named.map((store) => store.name).sort()).toEqual([
			'accepted delivery ids and claims',
			'listening sessions at the Test URL',
			'optional query parameters the service refused',
			"polling nodes' last hand-over",
			'request budgets',
			'run order',
			'signing keys',
		]);
		for (const store of named) {
			expect(store.belongsTo.length).toBeGreaterThan(10);
			expect(store.lifetime.length).toBeGreaterThan(10);
			expect(store.maxEntries).toBeLessThanOrEqual(10_000);
		}
	});

	it("the webhook trigger's signing keys: one per URL, the Test URL's released when the listening session ends, the Production URL's when the workflow is deactivated", async () => {
		const secrets = { webhookSigningSecret: newSigningSecret(), testWebhookSigningSecret: newSigningSecret() };
		const trigger = triggerWith({}, secrets);
		const body = JSON.stringify({ type: 'bid_intent.scheduled', data: { jobUid: 'j', bidId: 'b' } });
		// The editor listens: n8n registers the Test URL (as create() does, in manual mode).
		registerTrigger(new HookContext(trigger.workflow, trigger.node, trigger.additionalData, 'manual', 'manual', { isTest: true } as never));
		expect((await deliver(trigger, signDelivery(secrets.webhookSigningSecret, body))).status).toBe(200);
		expect((await deliver(trigger, signDelivery(secrets.testWebhookSigningSecret, body), 'manual')).status).toBe(200);
		expect(entriesOf('signing keys')).toBe(2);
		// n8n ends the session and deactivates the workflow with the same call, in the same mode; the session's is for its Test URL.
		const deletion = (webhookData: object) => new HookContext(trigger.workflow, trigger.node, trigger.additionalData, 'internal', 'update', webhookData as never);
		await new AgencyInboxTrigger().webhookMethods.default.delete.call(deletion({ isTest: true }));
		expect(entriesOf('signing keys')).toBe(1);
		await new AgencyInboxTrigger().webhookMethods.default.delete.call(deletion({}));
		expect(entriesOf('signing keys')).toBe(0);
	});

	it("a polling node's hand-over: let go two poll intervals after its last poll, since n8n never says it was deactivated", async () => {
		const sandbox = await startSandbox({ requestsPerMinute: 0 });
		try {
			const trigger = new TriggerWorkflow({
				type: 'agencyInboxInvitationTrigger',
				nodeType: new AgencyInboxInvitationTrigger(),
				parameters: { pollTimes: { item: [{ mode: 'everyHour', minute: 5 }] } },
				credentials: { agencyInboxApi: { apiKey: sandbox.apiKey, baseUrl: sandbox.url, requestsPerMinute: 10_000 } },
			});
			expect(await trigger.poll()).toBeNull();
			expect(entriesOf("polling nodes' last hand-over")).toBe(1);
			clockAheadMs = 2 * HOUR - MINUTE;
			expect(entriesOf("polling nodes' last hand-over")).toBe(1);
			clockAheadMs = 2 * HOUR + MINUTE;
			expect(entriesOf("polling nodes' last hand-over")).toBe(0);
		} finally {
			await sandbox.close();
		}
	});
});

describe('how long a polling node is remembered', () => {
	it.each([
		[{ mode: 'everyMinute' }, MINUTE],
		[{ mode: 'everyHour', minute: 5 }, HOUR],
		[{ mode: 'everyX', value: 10, unit: 'minutes' }, 10 * MINUTE],
		[{ mode: 'everyX', value: 6, unit: 'hours' }, 6 * HOUR],
		[{ mode: 'everyDay', hour: 9 }, DAY],
		[{ mode: 'everyWeek', weekday: 1 }, 7 * DAY],
		[{ mode: 'everyMonth', dayOfMonth: 31 }, 62 * DAY],
		[{ mode: 'custom', cronExpression: '15 * * * * *' }, MINUTE],
		[{ mode: 'custom', cronExpression: '*/5 * * * *' }, HOUR],
		[{ mode: 'custom', cronExpression: '0 9-17 * * *' }, DAY],
		[{ mode: 'custom', cronExpression: '0 9 * * 1-5' }, 7 * DAY],
		[{ mode: 'custom', cronExpression: '0 0 9 1 * *' }, 62 * DAY],
		[{ mode: 'custom', cronExpression: '0 9 1 1 *' }, 366 * DAY],
	])('%j leaves at most %d ms between polls', (item, gapMs) => {
		expect(longestPollGapMs(item)).toBe(gapMs);
	});

	it('for two of those gaps, at least an hour; the entry polling most often counts; none is n8n\'s default, every minute', () => {
		expect(pollMemoryKeptMs({ item: [{ mode: 'everyDay' }] })).toBe(2 * DAY);
		expect(pollMemoryKeptMs({ item: [{ mode: 'everyWeek' }, { mode: 'everyHour' }] })).toBe(2 * HOUR);
		expect(pollMemoryKeptMs({ item: [{ mode: 'everyMinute' }] })).toBe(HOUR);
		expect(pollMemoryKeptMs(undefined)).toBe(HOUR);
	});
});

describe('the one owner', () => {
	/** Module-level variables under nodes/ that can hold what a node keeps between calls. */
	function moduleLevelStores(): string[] {
		const found: string[] = [];
		const walk = (dir: string): void => {
			for (const name of readdirSync(dir)) {
				const file = path.join(dir, name);
				if (statSync(file).isDirectory()) walk(file);
				else if (name.endsWith('.ts')) {
					readFileSync(file, 'utf8')
						.split('\n')
						.forEach((line, index) => {
							// Top level only: `let`, or a Map, WeakMap or Set made empty (a set of constants is no store).
							if (/^(export )?let /.test(line) || /^(export )?const \w+(: [^=]+)? = new (Map|WeakMap|Set)\b[^(]*\(\)/.test(line)) found.push(`${path.relative(process.cwd(), file)}:${index + 1}: ${line}`);
						});
				}
			}
		};
		walk(path.join(process.cwd(), 'nodes'));
		return found;
	}

	it('holds every store under nodes/: no module keeps a map, a set or a variable of its own', () => {
		expect(moduleLevelStores()).toEqual([]);
	});
});
