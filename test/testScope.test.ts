/**
 * test/helpers/testScope.ts: a trigger a test made stops with its test. The first test leaves a loop of
 * polls going, as the body of a test that jest timed out goes on; the second sees that the loop ended
 * at the first test's end and that nothing of it reached the service afterwards.
 */
import { AgencyInboxProposalTrigger } from '../nodes/AgencyInboxProposalTrigger/AgencyInboxProposalTrigger.node';
import { startSandbox } from '../sandbox';
import { TriggerWorkflow } from './helpers/engine';
import { sandboxControl } from './helpers/sandboxControl';

let sandbox: Awaited<ReturnType<typeof startSandbox>>;
let leftPolling: Promise<unknown>;
let pollsInLoop = 0;

const requestsSeen = async () => ((await sandboxControl<{ data: unknown[] }>(sandbox.origin, 'GET', 'requests')) as unknown as { data: unknown[] }).data.length;

beforeAll(async () => {
	sandbox = await startSandbox({ requestsPerMinute: 0 });
});

afterAll(async () => {
	await sandbox.close();
});

it('a test that ends with its trigger still polling (as one that timed out)', async () => {
	const trigger = new TriggerWorkflow({
		type: 'agencyInboxProposalTrigger',
		nodeType: new AgencyInboxProposalTrigger(),
		parameters: {},
		credentials: { agencyInboxApi: { apiKey: sandbox.apiKey, baseUrl: sandbox.url, requestsPerMinute: 10_000 } },
	});
	leftPolling = (async () => {
		for (;;) {
			await trigger.poll();
			pollsInLoop++;
		}
	})();
	leftPolling.catch(() => {});
	while (pollsInLoop < 2) await new Promise((resolve) => setTimeout(resolve, 10));
});

it('the next test finds the loop ended with its test, and no request of it after the end', async () => {
	const stillPolling = new Promise((resolve) => setTimeout(resolve, 60_000)).then(() => 'still polling a minute after its test ended');
	await expect(Promise.race([leftPolling, stillPolling])).rejects.toThrow(/^a poll after the test that made workflow .+ ended$/);
	const seen = await requestsSeen();
	const polls = pollsInLoop;
	await new Promise((resolve) => setTimeout(resolve, 200));
	expect(pollsInLoop).toBe(polls);
	expect(await requestsSeen()).toBe(seen);
});
