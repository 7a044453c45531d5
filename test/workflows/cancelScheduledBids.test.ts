/**
 * The cancel-scheduled-bids sample (workflows/cancel-scheduled-bids.json) as saved, through
 * n8n-core's engine, under every reading of what the spec leaves open: the sandbox's own signed
 * bid_intent.scheduled delivery reaches the sample's webhook trigger; "Job Not on Always-Bid List" (an
 * n8n IF node, its saved condition evaluated by n8n's filter) decides; Cancel Bid Intent cancels the
 * event's bidId. The run in a real n8n is the end-to-end tests' part.
 */
import { SINGLE_READINGS } from '../../sandbox';
import type { BidIntent } from '../../sandbox/types';
import { nodeOutput } from '../helpers/engine';
import { control, takeRequests } from '../nodes/AgencyInbox/fixtures';
import { runSample, sampleWebhookTrigger, triggerItems, useSampleSandbox } from './sampleRuns';

const SAMPLE_ID = 'aiSampleBidFlow1';
/** A job on the sample's always-bid list, as saved. */
const ALWAYS_BID_JOB = 'job-keep-001';

describe.each(SINGLE_READINGS.map(({ label, variants }) => [label, variants] as const))('under reading %s', (_label, variants) => {
	const setup = useSampleSandbox(SAMPLE_ID, variants, { webhooks: true });

	const statusOf = (id: string) => setup.sandbox.state.bidIntents.find((intent) => intent.id === id)?.status;

	/** The run the next delivery starts. */
	async function runOnNextDelivery(trigger: ReturnType<typeof sampleWebhookTrigger>) {
		const items = await triggerItems(trigger, await setup.inbox.next());
		expect(items).toHaveLength(1);
		return await runSample(setup.sample, setup.sandbox, { node: 'Bid Scheduled', items: items! });
	}

	it('cancels a bid the rule rejects, once, with one request, and keeps a bid on a job of the always-bid list', async () => {
		const { sandbox, sample, inbox } = setup;
		const trigger = sampleWebhookTrigger(sample, 'Bid Scheduled', sandbox);

		const scheduled = (await control(sandbox, 'POST', 'changes', { kind: 'scheduleBid' })).data as unknown as BidIntent;
		const cancelling = await runOnNextDelivery(trigger);
		expect(cancelling.data.resultData.error?.message).toBeUndefined();
		expect(nodeOutput(cancelling, 'Cancel Bid Intent')).toEqual([{ success: true }]);
		expect(statusOf(scheduled.id)).toBe('cancelled');
		expect((await takeRequests(sandbox)).map((request) => `${request.method} ${request.path}`)).toEqual([`DELETE /v1/bid-intents/${scheduled.id}`]);

		const kept = (await control(sandbox, 'POST', 'changes', { kind: 'scheduleBid' })).data as unknown as BidIntent;
		await inbox.next(); // the sandbox's own event for it, with a job not on the list: not handed to the workflow
		await control(sandbox, 'POST', 'events', { type: 'bid_intent.scheduled', data: { jobUid: ALWAYS_BID_JOB, bidId: kept.id } });
		const keeping = await runOnNextDelivery(trigger);
		expect(keeping.data.resultData.error?.message).toBeUndefined();
		expect(nodeOutput(keeping, 'Job Not on Always-Bid List', 1)).toHaveLength(1);
		expect(nodeOutput(keeping, 'Cancel Bid Intent')).toBeUndefined();
		expect(statusOf(kept.id)).toBe('scheduled');
		expect(await takeRequests(sandbox)).toEqual([]);
	});
});
