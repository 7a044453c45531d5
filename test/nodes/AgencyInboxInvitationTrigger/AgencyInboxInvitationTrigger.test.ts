import type { IDataObject, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { AgencyInboxInvitationTrigger } from '../../../nodes/AgencyInboxInvitationTrigger/AgencyInboxInvitationTrigger.node';
import { MAX_INVITATIONS_KEPT, pollInvitations } from '../../../nodes/AgencyInboxInvitationTrigger/pollInvitations';
import type { InvitationTriggerState } from '../../../nodes/AgencyInboxInvitationTrigger/state';
import type { InvitationPage } from '../../../nodes/AgencyInboxInvitationTrigger/types';
import { resetProcessMemory } from '../../../nodes/shared/processMemory';
import { SINGLE_READINGS, startSandbox } from '../../../sandbox';
import { TriggerWorkflow } from '../../helpers/engine';
import { sandboxControl } from '../../helpers/sandboxControl';

type Sandbox = Awaited<ReturnType<typeof startSandbox>>;

const control = (sandbox: Sandbox, method: string, path: string, body?: unknown) => sandboxControl<IDataObject>(sandbox.origin, method, path, body);

async function change(sandbox: Sandbox, body: IDataObject): Promise<{ invite: { uid: string } }> {
	return (await control(sandbox, 'POST', 'changes', body)).data as { invite: { uid: string } };
}

async function invitationRequests(sandbox: Sandbox): Promise<number> {
	const { data } = (await control(sandbox, 'GET', 'requests')) as unknown as { data: Array<{ path: string }> };
	return data.filter((request) => request.path.endsWith('/v1/agency/invitations')).length;
}

function triggerFor(sandbox: Sandbox, parameters: INodeParameters = {}) {
	return new TriggerWorkflow({
		type: 'agencyInboxInvitationTrigger',
		nodeType: new AgencyInboxInvitationTrigger(),
		parameters,
		credentials: { agencyInboxApi: { apiKey: sandbox.apiKey, baseUrl: sandbox.url, requestsPerMinute: 10_000 } },
	});
}

const fired = (result: INodeExecutionData[][] | null) =>
	(result?.[0] ?? []).map(({ json }) => ({ uid: (json.invite as IDataObject).uid, trigger: json.trigger, status: (json.invite as IDataObject).status, previousStatus: json.previousStatus }));

async function activated(sandbox: Sandbox, parameters?: INodeParameters) {
	const trigger = triggerFor(sandbox, parameters);
	expect(await trigger.poll()).toBeNull();
	return trigger;
}

describe.each(SINGLE_READINGS.map(({ label, variants }) => [label, variants] as const))('Agency Inbox Invitation Trigger, reading %s', (_label, variants) => {
	let sandbox: Sandbox;

	beforeAll(async () => {
		sandbox = await startSandbox({ requestsPerMinute: 0, pageSize: 4, maxPageSize: 4, variants });
	});

	afterAll(async () => {
		await sandbox.close();
	});

	beforeEach(async () => {
		resetProcessMemory();
		await control(sandbox, 'POST', 'reset');
		await control(sandbox, 'DELETE', 'requests');
	});

	it('emits nothing historic at activation, then each new invitation once, wherever the list shows it', async () => {
		const trigger = await activated(sandbox);
		expect(await trigger.poll()).toBeNull();
		const first = await change(sandbox, { kind: 'newInvitation' });
		const second = await change(sandbox, { kind: 'newInvitation' });
		expect(fired(await trigger.poll())).toEqual([
			{ uid: first.invite.uid, trigger: 'new', status: 'PENDING', previousStatus: undefined },
			{ uid: second.invite.uid, trigger: 'new', status: 'PENDING', previousStatus: undefined },
		]);
		expect(await trigger.poll()).toBeNull();
	});

	it('a status change starts a run when asked for, with the status before it', async () => {
		const trigger = await activated(sandbox, { triggerOn: 'both' });
		const created = await change(sandbox, { kind: 'newInvitation' });
		expect(fired(await trigger.poll())).toHaveLength(1);
		await change(sandbox, { kind: 'invitationStatus', invitationUid: created.invite.uid, status: 'accepted' });
		expect(fired(await trigger.poll())).toEqual([{ uid: created.invite.uid, trigger: 'statusChanged', status: 'ACCEPTED', previousStatus: 'PENDING' }]);
		expect(await trigger.poll()).toBeNull();
	});

	it('New Invitations ignores status changes, Status Changes ignores new invitations', async () => {
		const onlyNew = await activated(sandbox, { triggerOn: 'new' });
		const onlyChanges = await activated(sandbox, { triggerOn: 'statusChanged' });
		const pending = sandbox.state.invitations.find((invitation) => invitation.invite.status === 'PENDING')!;
		await change(sandbox, { kind: 'invitationStatus', invitationUid: pending.invite.uid, status: 'declined' });
		const created = await change(sandbox, { kind: 'newInvitation' });
		expect(fired(await onlyNew.poll()).map((item) => item.uid)).toEqual([created.invite.uid]);
		expect(fired(await onlyChanges.poll()).map((item) => item.uid)).toEqual([pending.invite.uid]);
	});

	it('a new invitation under the uid of an earlier one (the service reset its data) is new', async () => {
		const trigger = await activated(sandbox);
		const first = await change(sandbox, { kind: 'newInvitation' });
		expect(fired(await trigger.poll()).map((item) => item.uid)).toEqual([first.invite.uid]);
		await control(sandbox, 'POST', 'reset');
		const again = await change(sandbox, { kind: 'newInvitation' });
		expect(again.invite.uid).toBe(first.invite.uid);
		expect(fired(await trigger.poll())).toEqual([{ uid: first.invite.uid, trigger: 'new', status: 'PENDING', previousStatus: undefined }]);
		expect(await trigger.poll()).toBeNull();
	});

	it('a poll reads the whole list: one request per page (pages of 4 here), nothing more when nothing changed', async () => {
		const trigger = await activated(sandbox);
		const pages = Math.ceil(sandbox.state.invitations.length / 4);
		await control(sandbox, 'DELETE', 'requests');
		expect(await trigger.poll()).toBeNull();
		expect(await invitationRequests(sandbox)).toBe(pages);
	});
});

describe('a list longer than one poll can read', () => {
	let sandbox: Sandbox;

	beforeAll(async () => {
		sandbox = await startSandbox({ requestsPerMinute: 0, pageSize: 4, maxPageSize: 4, variants: { invitationOrder: 'createdAtAsc' } });
	});

	afterAll(async () => {
		await sandbox.close();
	});

	/** GET /v1/agency/invitations over HTTP, as the node's fetcher does through the pipeline. */
	const fetchPage = async (pageCursor: string | undefined): Promise<InvitationPage> => {
		const query = new URLSearchParams(pageCursor ? { pageCursor } : {});
		const response = await fetch(`${sandbox.url}/v1/agency/invitations?${query}`, { headers: { authorization: `Bearer ${sandbox.apiKey}` } });
		if (!response.ok) throw Object.assign(new Error(`HTTP ${response.status}`), { httpCode: String(response.status) });
		return (await response.json()) as InvitationPage;
	};

	it('is read to its end across polls, each poll going on where the last one stopped', async () => {
		// Listed oldest first, so the new invitation is on the last page; a poll reads 3 pages at most.
		const seen = Object.fromEntries(sandbox.state.invitations.map((record) => [record.invite.uid, `${record.invite.createdAt} ${record.invite.status}/${record.invite.result}`]));
		const created = await change(sandbox, { kind: 'newInvitation' });
		let state: InvitationTriggerState = { seq: 1, seen };
		const emitted: string[] = [];
		let polls = 0;
		do {
			let pagesRead = 0;
			const outcome = await pollInvitations(state, fetchPage, { triggerOn: 'both', canContinue: () => ++pagesRead < 3 });
			emitted.push(...outcome.changes.map((found) => found.record.invite.uid));
			state = outcome.state;
			polls++;
		} while (state.resumeAt !== undefined && polls < 10);
		const pages = Math.ceil((sandbox.state.invitations.length) / 4);
		expect(polls).toBe(Math.ceil(pages / 3));
		expect(emitted).toEqual([created.invite.uid]);
	});

	it('starts again at the top when the service no longer takes the cursor it stopped at', async () => {
		const seen = Object.fromEntries(sandbox.state.invitations.map((record) => [record.invite.uid, `${record.invite.createdAt} ${record.invite.status}/${record.invite.result}`]));
		const created = await change(sandbox, { kind: 'newInvitation' });
		const outcome = await pollInvitations({ seq: 1, seen, resumeAt: 'a-cursor-the-service-does-not-know' }, fetchPage, { triggerOn: 'both', canContinue: () => true });
		expect(outcome.changes.map((found) => found.record.invite.uid)).toEqual([created.invite.uid]);
		expect(outcome.state.resumeAt).toBeUndefined();
	});
});

describe('the list order switched under a running trigger (the trigger relies on no order)', () => {
	let sandbox: Sandbox;

	beforeAll(async () => {
		sandbox = await startSandbox({ requestsPerMinute: 0, pageSize: 4, maxPageSize: 4 });
	});

	afterAll(async () => {
		await sandbox.close();
	});

	const useOrder = (invitationOrder: string) => control(sandbox, 'POST', 'variants', { invitationOrder });

	it('newest first → no time order → oldest first: each new invitation and status change once', async () => {
		const trigger = await activated(sandbox, { triggerOn: 'both' });
		const expected: Array<{ uid: unknown; trigger: string }> = [];
		const emitted: Array<{ uid: unknown; trigger: unknown }> = [];
		for (const order of ['scrambled', 'createdAtAsc', 'createdAtDesc']) {
			await useOrder(order);
			const created = await change(sandbox, { kind: 'newInvitation' });
			const pending = sandbox.state.invitations.find((invitation) => invitation.invite.status === 'PENDING' && invitation.invite.uid !== created.invite.uid)!;
			await change(sandbox, { kind: 'invitationStatus', invitationUid: pending.invite.uid, status: 'accepted' });
			expected.push({ uid: pending.invite.uid, trigger: 'statusChanged' }, { uid: created.invite.uid, trigger: 'new' });
			emitted.push(...fired(await trigger.poll()).map(({ uid, trigger: why }) => ({ uid, trigger: why })));
		}
		expect(await trigger.poll()).toBeNull();
		const byUid = (a: { uid: unknown }, b: { uid: unknown }) => String(a.uid).localeCompare(String(b.uid));
		expect(emitted.sort(byUid)).toEqual(expected.sort(byUid));
	});

	it('a sweep resumed across a switch (its cursor refused) starts again at the top: nothing lost, nothing twice', async () => {
		await useOrder('createdAtAsc');
		const fetchPage = async (pageCursor: string | undefined): Promise<InvitationPage> => {
			const response = await fetch(`${sandbox.url}/v1/agency/invitations?${new URLSearchParams(pageCursor ? { pageCursor } : {})}`, { headers: { authorization: `Bearer ${sandbox.apiKey}` } });
			if (!response.ok) throw Object.assign(new Error(`HTTP ${response.status}`), { httpCode: String(response.status) });
			return (await response.json()) as InvitationPage;
		};
		const seen = Object.fromEntries(sandbox.state.invitations.map((record) => [record.invite.uid, `${record.invite.createdAt} ${record.invite.status}/${record.invite.result}`]));
		const created = await change(sandbox, { kind: 'newInvitation' });
		let pagesRead = 0;
		// Two pages, then out of time: the new invitation, listed last, is not read yet.
		let outcome = await pollInvitations({ seq: 1, seen }, fetchPage, { triggerOn: 'both', canContinue: () => ++pagesRead < 2 });
		expect(outcome.changes).toEqual([]);
		expect(outcome.state.resumeAt).toBeDefined();
		await useOrder('scrambled');
		outcome = await pollInvitations(outcome.state, fetchPage, { triggerOn: 'both', canContinue: () => true });
		expect(outcome.changes.map((found) => found.record.invite.uid)).toEqual([created.invite.uid]);
		expect((await pollInvitations(outcome.state, fetchPage, { triggerOn: 'both', canContinue: () => true })).changes).toEqual([]);
	});
});

it(`past ${MAX_INVITATIONS_KEPT} invitations, those the list no longer shows are forgotten first: none the list still shows comes back as new`, async () => {
	const record = (uid: string): InvitationPage['data'][number] => ({ invite: { uid, createdAt: '2026-01-01T00:00:00.000Z', status: 'PENDING', result: '' } });
	const listed = Array.from({ length: MAX_INVITATIONS_KEPT - 1 }, (_, index) => record(`inv-${index}`));
	const fetchPage = async (): Promise<InvitationPage> => ({ data: listed });
	const seenAs = '2026-01-01T00:00:00.000Z PENDING/';
	// 'withdrawn' was seen after the others, and the list stopped showing it.
	let state: InvitationTriggerState = { seq: 1, seen: Object.fromEntries([...listed.map(({ invite }) => [invite.uid, seenAs]), ['withdrawn', seenAs]]) };
	listed.push(record('inv-new'));
	let outcome = await pollInvitations(state, fetchPage, { triggerOn: 'both', canContinue: () => true });
	expect(outcome.changes.map((found) => found.record.invite.uid)).toEqual(['inv-new']);
	state = outcome.state;
	expect(Object.keys(state.seen)).toHaveLength(MAX_INVITATIONS_KEPT);
	expect(state.seen.withdrawn).toBeUndefined();
	outcome = await pollInvitations(state, fetchPage, { triggerOn: 'both', canContinue: () => true });
	expect(outcome.changes).toEqual([]);
});

describe('one poll at a time', () => {
	let sandbox: Sandbox;

	beforeAll(async () => {
		sandbox = await startSandbox({ requestsPerMinute: 0 });
	});

	afterAll(async () => {
		await sandbox.close();
	});

	it('a poll while another of the same trigger runs in this process returns at once, without a request; the change comes once', async () => {
		const trigger = await activated(sandbox, { triggerOn: 'new' });
		const created = await change(sandbox, { kind: 'newInvitation' });
		await control(sandbox, 'POST', 'faults', { kind: 'hold', method: 'GET', pathPrefix: '/v1/agency/invitations', holdMs: 2_000 });
		const before = await invitationRequests(sandbox);
		const slow = trigger.poll();
		await new Promise((resolve) => setTimeout(resolve, 500));
		expect(await trigger.poll()).toBeNull();
		expect(fired(await slow).map(({ uid }) => uid)).toEqual([created.invite.uid]);
		expect(await invitationRequests(sandbox)).toBe(before + 1);
		expect(await trigger.poll()).toBeNull();
	});
});
