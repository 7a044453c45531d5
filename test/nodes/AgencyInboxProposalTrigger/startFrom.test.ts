/**
 * Start From: A Date on the Proposal Trigger, through n8n-core's poll context against the sandbox: the
 * proposals updated since the date and before the activation are handed on once, oldest first, at most
 * 100 a poll, beside the live changes, at pages of 5 (the survey and the re-read span many polls) and 100.
 */
import type { IDataObject, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { AgencyInboxProposalTrigger } from '../../../nodes/AgencyInboxProposalTrigger/AgencyInboxProposalTrigger.node';
import { BACKFILL_REQUESTS_PER_POLL } from '../../../nodes/AgencyInboxProposalTrigger/backfill';
import { resetProcessMemory } from '../../../nodes/shared/processMemory';
import { BACKFILL_RUN_SIZE } from '../../../nodes/shared/startFrom';
import { startSandbox } from '../../../sandbox';
import { TriggerWorkflow } from '../../helpers/engine';
import { activationMoment, pollUntilBackfilled, since } from '../../helpers/backfill';
import { sandboxControl } from '../../helpers/sandboxControl';

type Sandbox = Awaited<ReturnType<typeof startSandbox>>;

const control = (sandbox: Sandbox, method: string, path: string, body?: unknown) => sandboxControl<IDataObject>(sandbox.origin, method, path, body);

function triggerFor(sandbox: Sandbox, parameters: INodeParameters, staticData?: IDataObject) {
	return new TriggerWorkflow(
		{
			type: 'agencyInboxProposalTrigger',
			nodeType: new AgencyInboxProposalTrigger(),
			parameters: { simplify: false, ...parameters },
			credentials: { agencyInboxApi: { apiKey: sandbox.apiKey, baseUrl: sandbox.url, requestsPerMinute: 10_000 } },
		},
		staticData,
	);
}

interface Handed {
	uid: string;
	updatedAt: string;
	trigger: string;
	backfilled: boolean;
	notice?: string;
}

const handed = (result: INodeExecutionData[][] | null): Handed[] =>
	(result?.[0] ?? []).map(({ json }) => {
		const proposal = json.proposal as IDataObject;
		return { uid: String(proposal.uid), updatedAt: String(proposal.updatedAt), trigger: String(json.trigger), backfilled: json.backfilled as boolean, notice: json.backfillNotice as string | undefined };
	});

function updatedWithin(sandbox: Sandbox, fromMs: number, toMs: number): string[] {
	return sandbox.state.proposals
		.filter(({ proposal }) => proposal.updatedAt !== null && Date.parse(proposal.updatedAt) >= fromMs && Date.parse(proposal.updatedAt) <= toMs)
		.map(({ proposal }) => proposal.uid)
		.sort();
}


/** Polls until the pass is over; every poll's items. */
const backfillOf = async (trigger: TriggerWorkflow) => await pollUntilBackfilled(trigger, { key: 'watermark', nested: false }, handed);

const uids = (items: Handed[]) => items.map((item) => item.uid).sort();

describe.each([5, 100])('Proposal Trigger, Start From: A Date, pages of at most %i', (maxPageSize) => {
	let sandbox: Sandbox;

	beforeAll(async () => {
		sandbox = await startSandbox({ requestsPerMinute: 0, pageSize: 5, maxPageSize });
	});

	afterAll(async () => {
		await sandbox.close();
	});

	beforeEach(async () => {
		resetProcessMemory();
		await control(sandbox, 'POST', 'reset');
		await control(sandbox, 'POST', 'changes', { kind: 'recentHistory', messages: 1, proposals: 240, days: 20 });
	});

	it('hands on every proposal updated since the date once, oldest first, at most 100 a poll and a few requests, beside the live changes', async () => {
		const parameters = since(14);
		const trigger = triggerFor(sandbox, parameters);
		expect(await trigger.poll()).toBeNull();
		const activatedAt = await activationMoment();
		const expected = updatedWithin(sandbox, Date.parse(parameters.startDate), activatedAt);
		// A proposal of the range changes during the backfill: the live polls hand it on, the backfill not.
		const changed = (await control(sandbox, 'POST', 'changes', { kind: 'clientReply', proposalUid: expected[0] })).data as { proposal: { uid: string } };
		await control(sandbox, 'DELETE', 'requests');
		const polls = await backfillOf(trigger);
		const requests = (await control(sandbox, 'GET', 'requests')).data as unknown[];
		const all = polls.flat();
		expect(uids(all.filter((item) => item.backfilled))).toEqual(expected.filter((uid) => uid !== changed.proposal.uid));
		expect(all.filter((item) => !item.backfilled).map((item) => item.uid)).toEqual([changed.proposal.uid]);
		expect(polls[0][0]).toMatchObject({ uid: changed.proposal.uid, backfilled: false });
		const order = all.filter((item) => item.backfilled).map((item) => Date.parse(item.updatedAt));
		expect(order).toEqual([...order].sort((a, b) => a - b));
		expect(polls.every((items) => items.filter((item) => item.backfilled).length <= BACKFILL_RUN_SIZE)).toBe(true);
		// The live part's one request a poll, and the backfill's share.
		expect(requests.length).toBeLessThanOrEqual(polls.length * (1 + BACKFILL_REQUESTS_PER_POLL));
		expect(await trigger.poll()).toBeNull();
	});

	it('a restart in the middle, the same date again, an earlier date, Now: each proposal once', async () => {
		const later = since(7);
		const first = triggerFor(sandbox, later);
		expect(await first.poll()).toBeNull();
		const activatedAt = await activationMoment();
		const before = [...handed(await first.poll()), ...handed(await first.poll()), ...handed(await first.poll())];
		resetProcessMemory();
		const restarted = triggerFor(sandbox, later, first.staticData());
		const after = (await backfillOf(restarted)).flat();
		expect([...uids(before), ...uids(after)].sort()).toEqual(updatedWithin(sandbox, Date.parse(later.startDate), activatedAt));

		expect(await triggerFor(sandbox, later, restarted.staticData()).poll()).toBeNull();
		expect(await triggerFor(sandbox, { startFrom: 'now' }, restarted.staticData()).poll()).toBeNull();

		const earlier = since(18);
		const between = (await backfillOf(triggerFor(sandbox, earlier, restarted.staticData()))).flat();
		expect(uids(between)).toEqual(updatedWithin(sandbox, Date.parse(earlier.startDate), Date.parse(later.startDate) - 1));
		expect(between.every((item) => item.notice?.includes('Start From moved to'))).toBe(true);
	});

	it('a cursor the service no longer takes starts the survey again, and nothing is handed on twice', async () => {
		const parameters = since(14);
		const trigger = triggerFor(sandbox, parameters);
		expect(await trigger.poll()).toBeNull();
		const activatedAt = await activationMoment();
		const first = handed(await trigger.poll());
		await control(sandbox, 'POST', 'faults', { method: 'GET', pathPrefix: '/v1/agency/proposals', withCursor: true, status: 400, count: 2 });
		const rest = (await backfillOf(trigger)).flat();
		const all = [...first, ...rest];
		expect(uids(all)).toEqual(updatedWithin(sandbox, Date.parse(parameters.startDate), activatedAt));
	});

	it('Fetch Test Event shows one backfilled proposal; a state stored before Start From existed refuses a date before any request', async () => {
		const sample = handed(await triggerFor(sandbox, since(20)).poll('manual'));
		expect(sample).toHaveLength(1);
		expect(sample[0].backfilled).toBe(true);

		const legacy = triggerFor(sandbox, { startFrom: 'now' });
		expect(await legacy.poll()).toBeNull();
		const stored = legacy.staticData();
		for (const nodeData of Object.values(stored)) delete (nodeData as IDataObject).liveSince;
		await control(sandbox, 'DELETE', 'requests');
		await expect(triggerFor(sandbox, since(5), stored).poll()).rejects.toThrow(/published before Start From existed/);
		expect((await control(sandbox, 'GET', 'requests')).data).toEqual([]);
	});
});
