/**
 * Start From: A Date on the Invitation Trigger, through n8n-core's poll context against the sandbox: the
 * invitations created since the date and listed at the activation are handed on once, oldest first, at
 * most 100 a poll, beside the live changes, at no request of their own.
 */
import type { IDataObject, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { AgencyInboxInvitationTrigger } from '../../../nodes/AgencyInboxInvitationTrigger/AgencyInboxInvitationTrigger.node';
import { stepInvitationBackfill } from '../../../nodes/AgencyInboxInvitationTrigger/backfill';
import { bootstrapInvitations, pollInvitations } from '../../../nodes/AgencyInboxInvitationTrigger/pollInvitations';
import type { InvitationTriggerState } from '../../../nodes/AgencyInboxInvitationTrigger/state';
import type { InvitationPage } from '../../../nodes/AgencyInboxInvitationTrigger/types';
import { resetProcessMemory } from '../../../nodes/shared/processMemory';
import { BACKFILL_RUN_SIZE } from '../../../nodes/shared/startFrom';
import { SINGLE_READINGS, startSandbox } from '../../../sandbox';
import { TriggerWorkflow } from '../../helpers/engine';
import { activationMoment, pollUntilBackfilled, since } from '../../helpers/backfill';
import { sandboxControl } from '../../helpers/sandboxControl';
import { apiClient } from '../../sandbox/client';

type Sandbox = Awaited<ReturnType<typeof startSandbox>>;

const control = (sandbox: Sandbox, method: string, path: string, body?: unknown) => sandboxControl<IDataObject>(sandbox.origin, method, path, body);

const READINGS = SINGLE_READINGS.filter(({ label }) => ['default', 'invitationOrder=createdAtAsc', 'invitationOrder=scrambled', 'unnamedQueryParameters=rejected'].includes(label));

function triggerFor(sandbox: Sandbox, parameters: INodeParameters, staticData?: IDataObject) {
	return new TriggerWorkflow(
		{
			type: 'agencyInboxInvitationTrigger',
			nodeType: new AgencyInboxInvitationTrigger(),
			parameters,
			credentials: { agencyInboxApi: { apiKey: sandbox.apiKey, baseUrl: sandbox.url, requestsPerMinute: 10_000 } },
		},
		staticData,
	);
}

interface Handed {
	uid: string;
	createdAt: string;
	trigger: string;
	backfilled: boolean;
	notice?: string;
}

const handed = (result: INodeExecutionData[][] | null): Handed[] =>
	(result?.[0] ?? []).map(({ json }) => {
		const invite = json.invite as IDataObject;
		return { uid: String(invite.uid), createdAt: String(invite.createdAt), trigger: String(json.trigger), backfilled: json.backfilled as boolean, notice: json.backfillNotice as string | undefined };
	});

function createdWithin(sandbox: Sandbox, fromMs: number, toMs: number, keep: (status: string) => boolean = () => true): string[] {
	return sandbox.state.invitations
		.filter(({ invite }) => Date.parse(invite.createdAt) >= fromMs && Date.parse(invite.createdAt) <= toMs && keep(invite.status))
		.map(({ invite }) => invite.uid)
		.sort();
}


/** Polls until the pass is over; every poll's items. */
const backfillOf = async (trigger: TriggerWorkflow) => await pollUntilBackfilled(trigger, { key: 'invitations', nested: true }, handed);

const uids = (items: Handed[]) => items.map((item) => item.uid).sort();

describe.each(READINGS.map(({ label, variants }) => [label, variants] as const))('Invitation Trigger, Start From: A Date, reading %s', (_label, variants) => {
	let sandbox: Sandbox;

	beforeAll(async () => {
		sandbox = await startSandbox({ requestsPerMinute: 0, pageSize: 25, maxPageSize: 100, variants });
	});

	afterAll(async () => {
		await sandbox.close();
	});

	beforeEach(async () => {
		resetProcessMemory();
		await control(sandbox, 'POST', 'reset');
		await control(sandbox, 'POST', 'changes', { kind: 'recentHistory', messages: 1, invitations: 260, days: 20 });
	});

	it('hands on every invitation created since the date once, oldest first, at most 100 a poll, beside the live ones and at no request of its own', async () => {
		const parameters = { ...since(12), triggerOn: 'both' };
		const trigger = triggerFor(sandbox, parameters);
		const liveOnly = triggerFor(sandbox, { triggerOn: 'both' });
		expect(await trigger.poll()).toBeNull();
		expect(await liveOnly.poll()).toBeNull();
		const activatedAt = await activationMoment();
		const created = (await control(sandbox, 'POST', 'changes', { kind: 'newInvitation' })).data as { invite: { uid: string } };
		await control(sandbox, 'DELETE', 'requests');
		const polls = await backfillOf(trigger);
		const requestsWith = ((await control(sandbox, 'GET', 'requests')).data as unknown[]).length;
		await control(sandbox, 'DELETE', 'requests');
		for (let i = 0; i < polls.length; i++) await liveOnly.poll();
		expect(requestsWith).toBe(((await control(sandbox, 'GET', 'requests')).data as unknown[]).length);

		const all = polls.flat();
		expect(uids(all.filter((item) => item.backfilled))).toEqual(createdWithin(sandbox, Date.parse(parameters.startDate), activatedAt));
		expect(new Set(uids(all)).size).toBe(all.length);
		expect(polls[0][0]).toMatchObject({ uid: created.invite.uid, backfilled: false, trigger: 'new' });
		const backfilledRuns = polls.map((items) => items.filter((item) => item.backfilled));
		expect(backfilledRuns.every((run) => run.length <= BACKFILL_RUN_SIZE)).toBe(true);
		const order = backfilledRuns.flat().map((item) => Date.parse(item.createdAt));
		expect(order).toEqual([...order].sort((a, b) => a - b));
		expect(await trigger.poll()).toBeNull();
	});

	it('with Status Changes: the invitations created since the date that are no longer pending, as status changes', async () => {
		const parameters = { ...since(12), triggerOn: 'statusChanged' };
		const trigger = triggerFor(sandbox, parameters);
		expect(await trigger.poll()).toBeNull();
		const activatedAt = await activationMoment();
		const all = (await backfillOf(trigger)).flat();
		expect(uids(all)).toEqual(createdWithin(sandbox, Date.parse(parameters.startDate), activatedAt, (status) => status !== 'PENDING'));
		expect(all.every((item) => item.trigger === 'statusChanged' && item.backfilled)).toBe(true);
	});

	it('a restart in the middle, the same date again, an earlier date: each invitation once; an invitation found live is never backfilled', async () => {
		const later = since(6);
		const first = triggerFor(sandbox, later);
		expect(await first.poll()).toBeNull();
		const activatedAt = await activationMoment();
		const before = handed(await first.poll());
		resetProcessMemory();
		const restarted = triggerFor(sandbox, later, first.staticData());
		const after = (await backfillOf(restarted)).flat();
		expect([...uids(before), ...uids(after)].sort()).toEqual(createdWithin(sandbox, Date.parse(later.startDate), activatedAt));

		const again = triggerFor(sandbox, later, restarted.staticData());
		expect(await again.poll()).toBeNull();
		const live = (await control(sandbox, 'POST', 'changes', { kind: 'newInvitation' })).data as { invite: { uid: string } };
		expect(uids(handed(await again.poll()))).toEqual([live.invite.uid]);

		const earlier = since(15);
		const widened = triggerFor(sandbox, earlier, again.staticData());
		const between = (await backfillOf(widened)).flat();
		expect(uids(between)).toEqual(createdWithin(sandbox, Date.parse(earlier.startDate), Date.parse(later.startDate) - 1));
		expect(between.every((item) => item.notice?.includes('Start From moved to'))).toBe(true);
	});

	it('Fetch Test Event shows one backfilled invitation; a date too far back fails before any request', async () => {
		const sample = handed(await triggerFor(sandbox, since(20)).poll('manual'));
		expect(sample).toHaveLength(1);
		expect(sample[0].backfilled).toBe(true);
		await control(sandbox, 'DELETE', 'requests');
		await expect(triggerFor(sandbox, since(100)).poll()).rejects.toThrow(/more than 90 days back/);
		expect((await control(sandbox, 'GET', 'requests')).data).toEqual([]);
	});
});

describe('Invitation Trigger, Start From: A Date, a list longer than one poll reads', () => {
	let sandbox: Sandbox;

	beforeAll(async () => {
		// Pages of 4: the 300 invitations are 75 pages, a poll here reads 3.
		sandbox = await startSandbox({ requestsPerMinute: 0, pageSize: 4, maxPageSize: 4 });
		await control(sandbox, 'POST', 'changes', { kind: 'recentHistory', messages: 1, invitations: 260, days: 20 });
	});

	afterAll(async () => {
		await sandbox.close();
	});

	/** GET /v1/agency/invitations over HTTP. */
	const fetchPage = async (pageCursor: string | undefined): Promise<InvitationPage> => {
		const answer = await apiClient(sandbox).get<InvitationPage>('/v1/agency/invitations', { pageCursor });
		if (answer.status !== 200) throw Object.assign(new Error(`HTTP ${answer.status}`), { httpCode: String(answer.status) });
		return answer.body;
	};

	it('hands on each invitation since the date once over a sweep of several polls; a pass begun in the middle of a sweep ends only with a whole one', async () => {
		let state: InvitationTriggerState = await bootstrapInvitations(fetchPage);
		const activatedAt = await activationMoment();
		const startDate = since(12).startDate;
		const date = { iso: startDate, ms: Date.parse(startDate) };
		const handedOn: string[] = [];
		/** The node's poll: the live part, then the backfill over what it read; a poll reads 3 pages. */
		const poll = async (withDate: boolean) => {
			let pagesRead = 0;
			const live = await pollInvitations(state, fetchPage, { triggerOn: 'new', canContinue: () => ++pagesRead < 3 });
			const backfill = stepInvitationBackfill(state, live.read, withDate ? date : undefined, 'new');
			state = { ...live.state, ...(backfill.backfill ? { backfill: backfill.backfill } : {}) };
			expect(live.changes).toEqual([]);
			handedOn.push(...backfill.changes.map((change) => change.record.invite.uid));
			return live.read;
		};
		// Start From: Now for a few polls: the date comes in the middle of a sweep.
		for (let i = 0; i < 4; i++) await poll(false);
		expect(state.resumeAt).toBeDefined();
		let sweepsEnded = 0;
		let polls = 0;
		do {
			if ((await poll(true)).toEnd) sweepsEnded++;
			polls++;
		} while (state.backfill?.pass !== undefined && polls < 200);
		expect(state.backfill).toEqual({ covered: startDate });
		expect(handedOn.sort()).toEqual(createdWithin(sandbox, date.ms, activatedAt));
		expect(sweepsEnded).toBe(2);
	});
});
