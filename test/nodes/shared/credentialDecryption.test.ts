/**
 * n8n 2.x takes a fresh expression isolate (about 0.1 CPU s) for every decryption of a credential, so
 * the pipeline decrypts the node's credential at most once per request it sends (before: three times,
 * once each in the service client, the pipeline and n8n's authentication).
 */
import type { IDataObject } from 'n8n-workflow';

import { AgencyInboxInvitationTrigger } from '../../../nodes/AgencyInboxInvitationTrigger/AgencyInboxInvitationTrigger.node';
import { resetProcessMemory } from '../../../nodes/shared/processMemory';
import { startSandbox } from '../../../sandbox';
import { credentialDecryptions, TriggerWorkflow } from '../../helpers/engine';
import { sandboxControl } from '../../helpers/sandboxControl';

describe('credential decryption', () => {
	it('a poll reading several pages decrypts the credential once per request, and sends it with each', async () => {
		const sandbox = await startSandbox({ requestsPerMinute: 0, pageSize: 4, maxPageSize: 4 });
		try {
			resetProcessMemory();
			const trigger = new TriggerWorkflow({
				type: 'agencyInboxInvitationTrigger',
				nodeType: new AgencyInboxInvitationTrigger(),
				parameters: {},
				credentials: { agencyInboxApi: { apiKey: sandbox.apiKey, baseUrl: sandbox.url, requestsPerMinute: 10_000 } },
			});
			const before = credentialDecryptions.count;
			expect(await trigger.poll()).toBeNull();
			const { data: requests } = (await sandboxControl<IDataObject>(sandbox.origin, 'GET', 'requests')) as unknown as { data: Array<{ status: number }> };
			expect(requests.length).toBeGreaterThan(1);
			expect(requests.every((request) => request.status === 200)).toBe(true);
			expect(credentialDecryptions.count - before).toBe(requests.length);
		} finally {
			await sandbox.close();
		}
	});
});
