/**
 * A refused optional query parameter is a conclusion with a lifetime: the service is changed under a
 * running Invitation Trigger (its page size is such a parameter) and the trigger follows.
 */
import type { IDataObject } from 'n8n-workflow';

import { AgencyInboxInvitationTrigger } from '../../../nodes/AgencyInboxInvitationTrigger/AgencyInboxInvitationTrigger.node';
import { processMemoryTiming, resetProcessMemory } from '../../../nodes/shared/processMemory';
import { serviceClientTiming } from '../../../nodes/shared/serviceClient';
import { startSandbox } from '../../../sandbox';
import { TriggerWorkflow } from '../../helpers/engine';
import { sandboxControl } from '../../helpers/sandboxControl';

type Sandbox = Awaited<ReturnType<typeof startSandbox>>;

interface LoggedRequest {
	path: string;
	query: Record<string, string>;
	status: number;
}

const control = (sandbox: Sandbox, method: string, route: string, body?: unknown) => sandboxControl<IDataObject>(sandbox.origin, method, route, body);

/** The invitation list requests since the last call, as (page size sent or "-") and status. */
async function takeListRequests(sandbox: Sandbox): Promise<string[]> {
	const { data } = (await control(sandbox, 'GET', 'requests')) as unknown as { data: LoggedRequest[] };
	await control(sandbox, 'DELETE', 'requests');
	return data.filter((request) => request.path.endsWith('/v1/agency/invitations')).map((request) => `${request.query.pageSize ?? '-'} ${request.status}`);
}

describe('optional query parameters the service refused', () => {
	let sandbox: Sandbox;
	const realClock = processMemoryTiming.now;
	let clockAheadMs = 0;

	beforeAll(async () => {
		// Pages as large as the trigger asks for: one request a poll, with the page size or without it.
		sandbox = await startSandbox({ requestsPerMinute: 0, pageSize: 100, maxPageSize: 100, variants: { unnamedQueryParameters: 'rejected' } });
		processMemoryTiming.now = () => realClock() + clockAheadMs;
	});

	afterAll(async () => {
		processMemoryTiming.now = realClock;
		await sandbox.close();
	});

	beforeEach(() => resetProcessMemory());

	it('are sent again once the refusal expired: taken when the service honours them, dropped again when it refuses', async () => {
		const trigger = new TriggerWorkflow({
			type: 'agencyInboxInvitationTrigger',
			nodeType: new AgencyInboxInvitationTrigger(),
			parameters: { triggerOn: 'both' },
			credentials: { agencyInboxApi: { apiKey: sandbox.apiKey, baseUrl: sandbox.url, requestsPerMinute: 10_000 } },
		});
		await control(sandbox, 'DELETE', 'requests');
		const poll = async () => ((await trigger.poll())?.[0] ?? []).map(({ json }) => (json.invite as IDataObject).uid);
		const newInvitation = async () => ((await control(sandbox, 'POST', 'changes', { kind: 'newInvitation' })).data as { invite: { uid: string } }).invite.uid;

		// The activation: refused (400), the same request again without it.
		expect(await poll()).toEqual([]);
		expect(await takeListRequests(sandbox)).toEqual(['100 400', '- 200']);
		expect(await poll()).toEqual([]);
		expect(await takeListRequests(sandbox)).toEqual(['- 200']);

		// The service starts to honour it: the refusal still holds until it expires.
		await control(sandbox, 'POST', 'variants', { unnamedQueryParameters: 'honoured' });
		clockAheadMs += serviceClientTiming.refusalKeptMs - 1_000;
		expect(await poll()).toEqual([]);
		expect(await takeListRequests(sandbox)).toEqual(['- 200']);

		clockAheadMs += 1_000;
		const invited = await newInvitation();
		expect(await poll()).toEqual([invited]);
		expect(await takeListRequests(sandbox)).toEqual(['100 200']);
		expect(await poll()).toEqual([]);
		expect(await takeListRequests(sandbox)).toEqual(['100 200']);

		// It refuses again: one more request, and the parameter is dropped for another lifetime.
		await control(sandbox, 'POST', 'variants', { unnamedQueryParameters: 'rejected' });
		const invitedAgain = await newInvitation();
		expect(await poll()).toEqual([invitedAgain]);
		expect(await takeListRequests(sandbox)).toEqual(['100 400', '- 200']);
		expect(await poll()).toEqual([]);
		expect(await takeListRequests(sandbox)).toEqual(['- 200']);
	});
});
