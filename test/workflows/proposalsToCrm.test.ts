/**
 * The proposals-to-CRM sample (workflows/proposals-to-crm.json) as saved, through n8n-core's engine,
 * under every reading of what the spec leaves open: its Proposal Trigger polls the sandbox, and each
 * poll that finds changes starts a run of "Post to CRM" (n8n's HTTP Request node, restated for its
 * one configuration) against the sandbox's CRM. The run in a real n8n is the end-to-end tests' part.
 */
import type { IDataObject } from 'n8n-workflow';

import { AgencyInboxProposalTrigger } from '../../nodes/AgencyInboxProposalTrigger/AgencyInboxProposalTrigger.node';
import { SINGLE_READINGS } from '../../sandbox';
import { nodeOutput, TriggerWorkflow } from '../helpers/engine';
import { control, takeRequests } from '../nodes/AgencyInbox/fixtures';
import { nodeOf, runSample, sampleCredential, useSampleSandbox } from './sampleRuns';

const SAMPLE_ID = 'aiSampleCrmFlow1';
const TRIGGER = 'New or Updated Proposal';

describe.each(SINGLE_READINGS.map(({ label, variants }) => [label, variants] as const))('under reading %s', (_label, variants) => {
	const setup = useSampleSandbox(SAMPLE_ID, variants);

	const crmRecords = async () => (await control<{ data: IDataObject[] }>(setup.sandbox, 'GET', 'crm')).data;

	it('posts each new or changed proposal to the CRM once, as a flat record with why it fired; a poll with no change costs one request and posts nothing', async () => {
		const { sandbox, sample } = setup;
		const trigger = new TriggerWorkflow({
			type: 'agencyInboxProposalTrigger',
			nodeType: new AgencyInboxProposalTrigger(),
			parameters: nodeOf(sample, TRIGGER).parameters,
			credentials: { agencyInboxApi: sampleCredential(sandbox) },
		});
		expect(await trigger.poll()).toBeNull(); // activation: nothing historic

		await control(sandbox, 'POST', 'changes', { kind: 'clientReply', proposalUid: 'prop-0003' });
		await control(sandbox, 'POST', 'changes', { kind: 'hire', proposalUid: 'prop-0007' });
		await control(sandbox, 'POST', 'changes', { kind: 'status', proposalUid: 'prop-0010', status: 'archived' });
		const created = (await control(sandbox, 'POST', 'changes', { kind: 'newProposal' })).data as { proposal: { uid: string } };
		const items = (await trigger.poll())?.[0] ?? [];
		const run = await runSample(sample, sandbox, { node: TRIGGER, items }, { mode: 'trigger' });
		expect(run.data.resultData.error?.message).toBeUndefined();
		expect(nodeOutput(run, 'Post to CRM')).toHaveLength(4);

		const expected = [
			{ uid: 'prop-0003', trigger: 'updated', resultEvent: 'CLIENT_REPLIED' },
			{ uid: 'prop-0007', trigger: 'updated', resultEvent: 'HIRED' },
			{ uid: 'prop-0010', trigger: 'updated', resultEvent: null, status: 'ARCHIVED' },
			{ uid: created.proposal.uid, trigger: 'new', resultEvent: null },
		];
		const posted = await crmRecords();
		expect(posted).toEqual(expected.map((record) => expect.objectContaining(record)));
		// Simplify as saved: a flat record, not the service's nested one.
		expect(posted.every((record) => typeof record.freelancerUid === 'string' && record.proposal === undefined)).toBe(true);

		await takeRequests(sandbox);
		expect(await trigger.poll()).toBeNull();
		expect((await takeRequests(sandbox)).map((request) => request.path)).toEqual(['/v1/agency/proposals']);
		expect(await crmRecords()).toHaveLength(4);
	});
});
