/**
 * Which samples `npm start` publishes: every one but the reply samples other than the webhook
 * auto-reply. Each reply sample answers every client message, so two published would send two
 * replies to one message. test/e2e/npmStart.test.ts counts the replies in a real n8n.
 */
import { DEMO_REPLY_SAMPLE_ID, SAMPLE_SANDBOX_ORIGIN, demoPublishedSamples, loadSampleWorkflows, sendsMessages } from '../../scripts/n8n/agencyInbox';

it('publishes one reply sample (the webhook auto-reply) of the three, with every other sample', async () => {
	const samples = await loadSampleWorkflows({ sandboxOrigin: SAMPLE_SANDBOX_ORIGIN, withChatModel: true });
	const replySamples = samples.filter(sendsMessages).map((sample) => sample.id).sort();
	expect(replySamples).toEqual(['aiSampleAiReply1', 'aiSampleChatFlw1', 'aiSampleChatPoll']);

	const published = demoPublishedSamples(samples);
	expect(published.filter(sendsMessages).map((sample) => sample.id)).toEqual([DEMO_REPLY_SAMPLE_ID]);
	expect(published.map((sample) => sample.id).sort()).toEqual(samples.map((sample) => sample.id).filter((id) => id === DEMO_REPLY_SAMPLE_ID || !replySamples.includes(id)).sort());
	expect(published.map((sample) => sample.name)).toEqual(expect.arrayContaining([expect.stringMatching(/cancel scheduled bids/), expect.stringMatching(/proposals to the CRM/)]));
});
