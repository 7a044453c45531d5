import { PollContext } from 'n8n-core';
import type { IDataObject, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { resetProcessMemory } from '../../../nodes/shared/processMemory';
import { AgencyInboxProposalTrigger } from '../../../nodes/AgencyInboxProposalTrigger/AgencyInboxProposalTrigger.node';
import { SINGLE_READINGS, startSandbox } from '../../../sandbox';
import { TriggerWorkflow } from '../../helpers/engine';
import { sandboxControl } from '../../helpers/sandboxControl';
import { LoopbackProxy } from './loopbackProxy';

type Sandbox = Awaited<ReturnType<typeof startSandbox>>;

interface SandboxRequest {
	method: string;
	path: string;
	query: Record<string, string>;
	status: number;
}

const control = (sandbox: Sandbox, method: string, path: string, body?: unknown) => sandboxControl<IDataObject>(sandbox.origin, method, path, body);

async function change(sandbox: Sandbox, body: IDataObject): Promise<{ proposal: IDataObject & { uid: string } }> {
	return (await control(sandbox, 'POST', 'changes', body)).data as { proposal: IDataObject & { uid: string } };
}

async function proposalRequests(sandbox: Sandbox): Promise<SandboxRequest[]> {
	const { data } = (await control(sandbox, 'GET', 'requests')) as unknown as { data: SandboxRequest[] };
	return data.filter((request) => request.path.endsWith('/v1/agency/proposals'));
}

function triggerFor(sandbox: Sandbox, parameters: INodeParameters, baseUrl = sandbox.url) {
	return new TriggerWorkflow({
		type: 'agencyInboxProposalTrigger',
		nodeType: new AgencyInboxProposalTrigger(),
		parameters: { simplify: false, ...parameters },
		credentials: { agencyInboxApi: { apiKey: sandbox.apiKey, baseUrl, requestsPerMinute: 10_000 } },
	});
}

function fired(result: INodeExecutionData[][] | null) {
	return (result?.[0] ?? []).map(({ json }) => ({
		uid: (json.proposal as IDataObject).uid,
		trigger: json.trigger,
		resultEvent: json.resultEvent,
	}));
}

/**
 * The node's static data as n8n persists it (JSON). TriggerWorkflow.staticData() uses structuredClone,
 * which cannot clone the ObservableObject proxy n8n wraps static data in.
 */
function persistedState(trigger: TriggerWorkflow): IDataObject | undefined {
	const persisted = JSON.parse(JSON.stringify(trigger.workflow.staticData)) as IDataObject;
	return persisted['node:Node Under Test'] as IDataObject | undefined;
}

/** A trigger that was activated (its first poll noted the clock). */
async function activated(sandbox: Sandbox, parameters: INodeParameters = {}, baseUrl?: string) {
	const trigger = triggerFor(sandbox, parameters, baseUrl);
	expect(await trigger.poll()).toBeNull();
	return trigger;
}

// Every case under each reading of what the spec leaves open: the proposals list takes only the
// parameters the spec names, so a service that refuses others (400) must not see one.
describe.each(SINGLE_READINGS.map(({ label, variants }) => [label, variants] as const))('Agency Inbox Proposal Trigger against the sandbox, reading %s', (_label, variants) => {
	let sandbox: Sandbox;

	beforeAll(async () => {
		sandbox = await startSandbox({ requestsPerMinute: 0, pageSize: 2, proposals: 40, variants });
	});

	afterAll(async () => {
		await sandbox.close();
	});

	beforeEach(async () => {
		resetProcessMemory();
		await control(sandbox, 'POST', 'reset');
		await control(sandbox, 'DELETE', 'requests');
	});

	it('emits nothing at activation and sends no request', async () => {
		const trigger = triggerFor(sandbox, {});
		expect(await trigger.poll()).toBeNull();
		expect(await proposalRequests(sandbox)).toEqual([]);
		expect(persistedState(trigger)).toMatchObject({ watermark: { uids: [] } });
	});

	it('a client reply, a hire and a new proposal each produce exactly one item at the next poll', async () => {
		const trigger = await activated(sandbox);
		await change(sandbox, { kind: 'clientReply', proposalUid: 'prop-0003' });
		expect(fired(await trigger.poll())).toEqual([{ uid: 'prop-0003', trigger: 'updated', resultEvent: 'CLIENT_REPLIED' }]);
		await change(sandbox, { kind: 'hire', proposalUid: 'prop-0007' });
		expect(fired(await trigger.poll())).toEqual([{ uid: 'prop-0007', trigger: 'updated', resultEvent: 'HIRED' }]);
		const created = await change(sandbox, { kind: 'newProposal' });
		expect(fired(await trigger.poll())).toEqual([{ uid: created.proposal.uid, trigger: 'new', resultEvent: null }]);
	});

	it('a poll with no change produces nothing, with one request', async () => {
		const trigger = await activated(sandbox);
		await change(sandbox, { kind: 'viewed', proposalUid: 'prop-0001' });
		expect(fired(await trigger.poll())).toHaveLength(1);
		await control(sandbox, 'DELETE', 'requests');
		expect(await trigger.poll()).toBeNull();
		expect(await proposalRequests(sandbox)).toHaveLength(1);
	});

	it('an update made between two pages of a sweep arrives at the next poll', async () => {
		const proxy = new LoopbackProxy(sandbox.origin);
		await proxy.start();
		try {
			const trigger = await activated(sandbox, {}, `${proxy.origin}/service`);
			for (const uid of ['prop-0001', 'prop-0002', 'prop-0003', 'prop-0004', 'prop-0005']) {
				await change(sandbox, { kind: 'viewed', proposalUid: uid });
			}
			let injected = false;
			proxy.beforeForward = async ({ path, query }) => {
				if (!injected && path.endsWith('/v1/agency/proposals') && query.has('pageCursor')) {
					injected = true;
					// prop-0001 is the oldest change, still on the last page: the reply moves it above the cursor.
					await change(sandbox, { kind: 'clientReply', proposalUid: 'prop-0001' });
				}
			};
			const first = fired(await trigger.poll());
			expect(injected).toBe(true);
			expect(first.map((item) => item.uid)).toEqual(['prop-0002', 'prop-0003', 'prop-0004', 'prop-0005']);
			expect(fired(await trigger.poll())).toEqual([{ uid: 'prop-0001', trigger: 'updated', resultEvent: 'CLIENT_REPLIED' }]);
			expect(await trigger.poll()).toBeNull();
		} finally {
			await proxy.close();
		}
	});

	it('drops boundary duplicates and keeps another proposal changed at the same time', async () => {
		const trigger = await activated(sandbox);
		await change(sandbox, { kind: 'clientReply', proposalUid: 'prop-0010' });
		expect(fired(await trigger.poll()).map((item) => item.uid)).toEqual(['prop-0010']);
		await change(sandbox, { kind: 'hire', proposalUid: 'prop-0011', sameTimestampAs: 'prop-0010' });
		await control(sandbox, 'DELETE', 'requests');
		expect(fired(await trigger.poll())).toEqual([{ uid: 'prop-0011', trigger: 'updated', resultEvent: 'HIRED' }]);
		// The inclusive boundary did send prop-0010 again: it was dropped as a duplicate.
		expect(await trigger.poll()).toBeNull();
	});

	it('recovers from a 400 for a cursor issued for another ordering', async () => {
		const proxy = new LoopbackProxy(sandbox.origin);
		await proxy.start();
		try {
			const trigger = await activated(sandbox, {}, `${proxy.origin}/service`);
			for (const uid of ['prop-0001', 'prop-0002', 'prop-0003', 'prop-0004', 'prop-0005']) {
				await change(sandbox, { kind: 'viewed', proposalUid: uid });
			}
			const otherOrdering = await fetch(`${sandbox.url}/v1/agency/proposals`, {
				headers: { authorization: `Bearer ${sandbox.apiKey}` },
			}).then(async (response) => ((await response.json()) as { meta: { nextCursor: string } }).meta.nextCursor);
			let swapped = false;
			proxy.beforeForward = async ({ query }) => {
				if (swapped || !query.has('pageCursor')) return;
				swapped = true;
				// The cursor the trigger holds is now one issued for the createdAt ordering.
				query.set('pageCursor', otherOrdering);
				return query;
			};
			await control(sandbox, 'DELETE', 'requests');
			const items = fired(await trigger.poll());
			expect(items.map((item) => item.uid)).toEqual(['prop-0001', 'prop-0002', 'prop-0003', 'prop-0004', 'prop-0005']);
			const requests = await proposalRequests(sandbox);
			expect(requests.map((request) => request.status)).toContain(400);
			const afterRejection = requests[requests.findIndex((request) => request.status === 400) + 1];
			expect(afterRejection.query.pageCursor).toBeUndefined();
			expect(await trigger.poll()).toBeNull();
		} finally {
			await proxy.close();
		}
	});

	it('resumes a sweep cut short by the poll time budget at the next poll, losing nothing', async () => {
		const trigger = await activated(sandbox);
		const changed = ['prop-0001', 'prop-0002', 'prop-0003', 'prop-0004', 'prop-0005'];
		for (const uid of changed) await change(sandbox, { kind: 'viewed', proposalUid: uid });
		// n8n's poll budget of 0 ms: the trigger reads one page per poll and resumes at the stored cursor.
		const pollWithoutTime = async () => {
			const context = new PollContext(trigger.workflow, trigger.node, trigger.additionalData, 'trigger', 'activate',
				undefined, undefined, undefined, undefined, undefined, () => 0);
			return await new AgencyInboxProposalTrigger().poll.call(context);
		};
		const perPoll: string[][] = [];
		for (let poll = 0; poll < 4; poll++) perPoll.push(fired(await pollWithoutTime()).map((item) => item.uid as string));
		expect(perPoll).toEqual([['prop-0004', 'prop-0005'], ['prop-0002', 'prop-0003'], ['prop-0001'], []]);
		expect(persistedState(trigger)?.pending).toBeUndefined();
	});

	it('a poll that starts while the previous one runs returns at once, without a request', async () => {
		const proxy = new LoopbackProxy(sandbox.origin);
		await proxy.start();
		let releaseSlowAnswer: () => void = () => {};
		const slowAnswer = new Promise<void>((resolve) => (releaseSlowAnswer = resolve));
		try {
			const trigger = await activated(sandbox, {}, `${proxy.origin}/service`);
			await change(sandbox, { kind: 'clientReply', proposalUid: 'prop-0004' });
			proxy.beforeForward = async () => await slowAnswer;
			const first = trigger.poll();
			await new Promise((resolve) => setTimeout(resolve, 200));
			const second = await Promise.race([trigger.poll(), new Promise((resolve) => setTimeout(() => resolve('still waiting'), 2_000))]);
			expect(second).toBeNull();
			expect(await proposalRequests(sandbox)).toEqual([]);
			releaseSlowAnswer();
			expect(fired(await first)).toEqual([{ uid: 'prop-0004', trigger: 'updated', resultEvent: 'CLIENT_REPLIED' }]);
			proxy.beforeForward = undefined;
			expect(await trigger.poll()).toBeNull();
			expect(await proposalRequests(sandbox)).toHaveLength(2);
		} finally {
			releaseSlowAnswer();
			await proxy.close();
		}
	});

	it("with n8n's durable cursors, a poll that reads the cursor before the previous poll's commit emits nothing", async () => {
		const trigger = await activated(sandbox);
		// The durable scheduler hands each poll a copy of the committed cursor, and commits the copy the
		// poll leaves only after poll() returns.
		let committed = JSON.parse(JSON.stringify(trigger.workflow.staticData['node:Node Under Test'])) as IDataObject;
		const durablePoll = async (cursor: IDataObject) => {
			const context = new PollContext(trigger.workflow, trigger.node, trigger.additionalData, 'trigger', 'activate',
				undefined, undefined, undefined, undefined, () => cursor, () => 60_000);
			return await new AgencyInboxProposalTrigger().poll.call(context);
		};
		await change(sandbox, { kind: 'hire', proposalUid: 'prop-0006' });
		const firstCursor = structuredClone(committed);
		expect(fired(await durablePoll(firstCursor))).toEqual([{ uid: 'prop-0006', trigger: 'updated', resultEvent: 'HIRED' }]);
		// Not committed yet: the next poll still reads the old cursor, and must not emit the hire again.
		expect(await durablePoll(structuredClone(committed))).toBeNull();
		expect(await proposalRequests(sandbox)).toHaveLength(1);
		committed = firstCursor;
		expect(await durablePoll(structuredClone(committed))).toBeNull();
		expect(await proposalRequests(sandbox)).toHaveLength(2);
	});

	it("with n8n's durable cursors, a change made right after activation arrives though n8n dropped the activation poll's state", async () => {
		const trigger = triggerFor(sandbox, {});
		// The durable scheduler runs a poll at activation over an empty cursor and does not commit what it
		// leaves; the scheduled polls after it read the empty cursor again until one of them commits.
		const durablePoll = async (cursor: IDataObject) => {
			const context = new PollContext(trigger.workflow, trigger.node, trigger.additionalData, 'trigger', 'activate',
				undefined, undefined, undefined, undefined, () => cursor, () => 60_000);
			return await new AgencyInboxProposalTrigger().poll.call(context);
		};
		expect(await durablePoll({})).toBeNull();
		await change(sandbox, { kind: 'clientReply', proposalUid: 'prop-0012' });
		const firstScheduled: IDataObject = {};
		expect(fired(await durablePoll(firstScheduled))).toEqual([{ uid: 'prop-0012', trigger: 'updated', resultEvent: 'CLIENT_REPLIED' }]);
		// That poll's state is committed with its execution: the next poll starts from it.
		expect(await durablePoll(structuredClone(firstScheduled))).toBeNull();
	});

	it('Trigger On: new only, updated only', async () => {
		const onlyNew = await activated(sandbox, { triggerOn: 'new' });
		const onlyUpdated = await activated(sandbox, { triggerOn: 'updated' });
		await change(sandbox, { kind: 'clientReply', proposalUid: 'prop-0004' });
		const created = await change(sandbox, { kind: 'newProposal' });
		expect(fired(await onlyNew.poll())).toEqual([{ uid: created.proposal.uid, trigger: 'new', resultEvent: null }]);
		expect(fired(await onlyUpdated.poll())).toEqual([{ uid: 'prop-0004', trigger: 'updated', resultEvent: 'CLIENT_REPLIED' }]);
	});

	it('filters by result event and by status', async () => {
		const hires = await activated(sandbox, { triggerOn: 'updated', filters: { resultEvents: ['HIRED'] } });
		const archived = await activated(sandbox, { filters: { status: 'archived' } });
		await change(sandbox, { kind: 'clientReply', proposalUid: 'prop-0004' });
		await change(sandbox, { kind: 'hire', proposalUid: 'prop-0005' });
		await change(sandbox, { kind: 'status', proposalUid: 'prop-0006', status: 'archived' });
		await change(sandbox, { kind: 'newProposal' });
		expect(fired(await hires.poll())).toEqual([{ uid: 'prop-0005', trigger: 'updated', resultEvent: 'HIRED' }]);
		expect(fired(await archived.poll())).toEqual([{ uid: 'prop-0006', trigger: 'updated', resultEvent: null }]);
		const statusQueries = (await proposalRequests(sandbox)).map((request) => request.query.status);
		expect(statusQueries).toContain('archived');
	});

	it('Fetch Test Event returns the most recent matching proposal and leaves the state alone', async () => {
		await change(sandbox, { kind: 'hire', proposalUid: 'prop-0008' });
		await change(sandbox, { kind: 'viewed', proposalUid: 'prop-0009' });
		const trigger = triggerFor(sandbox, { triggerOn: 'updated', filters: { resultEvents: ['HIRED'] } });
		const items = fired(await trigger.poll('manual'));
		expect(items).toEqual([{ uid: 'prop-0008', trigger: 'updated', resultEvent: 'HIRED' }]);
		expect(persistedState(trigger)).toBeUndefined();
	});

	it('Simplify returns the compact shape with the reason it fired', async () => {
		const trigger = await activated(sandbox, { simplify: true });
		await change(sandbox, { kind: 'hire', proposalUid: 'prop-0002' });
		const [item] = (await trigger.poll())![0];
		expect(item.json).toMatchObject({ trigger: 'updated', resultEvent: 'HIRED' });
		expect(item.json.freelancer).toBeUndefined();
	});
});

describe('Agency Inbox Proposal Trigger state size', () => {
	it('stays small after thousands of updates', async () => {
		const sandbox = await startSandbox({ requestsPerMinute: 0, pageSize: 100, proposals: 300 });
		try {
			const trigger = await activated(sandbox);
			let emitted = 0;
			for (let round = 0; round < 5; round++) {
				for (let index = 0; index < 500; index++) {
					await change(sandbox, { kind: index % 2 ? 'viewed' : 'clientReply' });
				}
				emitted += fired(await trigger.poll()).length;
			}
			expect(emitted).toBeGreaterThan(5 * 100);
			const state = persistedState(trigger) as IDataObject;
			expect((state.watermark as { uids: string[] }).uids).toHaveLength(1);
			expect(JSON.stringify(state).length).toBeLessThan(200);
		} finally {
			await sandbox.close();
		}
	});
});
