/**
 * Bursts of signed deliveries in a real n8n (the pinned version, its default setup): dozens of
 * deliveries with distinct ids within seconds, as the service's retries send them after an outage,
 * each starting the chat auto-reply, so runs overlap for minutes behind the request budget. Every
 * delivery must start exactly one run that reaches its last node (one reply naming its id); the same
 * burst with every id twice in a shuffled order too.
 */
import path from 'node:path';

import { startSandbox, type Sandbox } from '../../sandbox';
import { buildPackage, installIntoN8n, sandboxCredential, SAMPLE_CREDENTIAL } from '../../scripts/n8n/agencyInbox';
import { ensureN8n, startN8n, type RunningN8n } from '../../scripts/n8n/harness';
import { SELECTED_N8N_VERSION } from '../../scripts/n8n/install';
import { makeTempDir, removeTempDir } from '../../scripts/tempDirs';
import { ALREADY_ACCEPTED, burstDeliveries, burstReplyWorkflow, eachTwiceShuffled, expectOneReplyEach, notExactlyOnce, postBurst, repliesPerDelivery } from './bursts';
import { finishedExecutions, listExecutions, sleep, waitFor } from './support';

const n8nVersion = SELECTED_N8N_VERSION;
const SETUP_TIMEOUT_MS = 30 * 60_000;
const WORKFLOW_ID = 'e2eBurstReplies1';
const WEBHOOK_ID = '5b0e6a52-7c1d-4e3f-9a8b-0c1d2e3f4b77';
/** The service's limit and the credential's budget, raised from 20 so a burst of 100 takes minutes, not ten. */
const REQUESTS_PER_MINUTE = 60;

describe(`bursts of deliveries in a real n8n ${n8nVersion}`, () => {
	let sandbox: Sandbox;
	let n8n: RunningN8n | undefined;
	let workDir: string;
	const webhookUrl = () => `${n8n!.url}/webhook/${WEBHOOK_ID}/webhook`;
	const runs = async () => finishedExecutions(await listExecutions(n8n!.url, n8n!.restHeaders, WORKFLOW_ID));

	beforeAll(async () => {
		const progress = (line: string) => process.stderr.write(`${line}\n`);
		await Promise.all([buildPackage(progress), ensureN8n(n8nVersion, progress)]);
		sandbox = await startSandbox({ requestsPerMinute: REQUESTS_PER_MINUTE });
		workDir = makeTempDir('e2e-burst');
		const userFolder = path.join(workDir, 'n8n');
		await installIntoN8n({
			userFolder,
			n8nVersion,
			credentials: [sandboxCredential(sandbox, REQUESTS_PER_MINUTE)],
			workflows: [burstReplyWorkflow(WORKFLOW_ID, WEBHOOK_ID, { id: SAMPLE_CREDENTIAL.id, name: SAMPLE_CREDENTIAL.name })],
			publish: [WORKFLOW_ID],
		});
		n8n = await startN8n({ userFolder, env: { GENERIC_TIMEZONE: 'UTC', N8N_LOG_LEVEL: 'info' } });
	}, SETUP_TIMEOUT_MS);

	afterAll(async () => {
		await n8n?.stop();
		await sandbox?.close();
		if (workDir) removeTempDir(workDir);
	}, 60_000);

	it.each([
		[30, 100],
		[100, 30],
	])('a burst of %i deliveries posted %i ms apart right after n8n started: one run each that reaches its last node', async (count, spacingMs) => {
		const deliveries = burstDeliveries(sandbox, `burst${count}`, count);
		const before = (await runs()).length;
		const answers = await postBurst(webhookUrl(), sandbox.signingSecret, deliveries, spacingMs);
		expect(answers.filter((answer) => answer.status !== 200 || answer.message !== 'Delivery accepted; run started')).toEqual([]);
		const tookMs = await expectOneReplyEach(sandbox.origin, deliveries, 12 * 60_000);
		process.stderr.write(`burst of ${count}: replies within ${(tookMs / 1000).toFixed(1)} s of the last answer\n`);
		await waitFor('every run to finish', runs, (found) => found.length === before + count, 60_000);
		expect((await runs()).slice(0, count).filter((execution) => execution.status !== 'success')).toEqual([]);
	}, 15 * 60_000);

	it('the same burst with every id twice in a shuffled order: still one run each, and a later re-delivery none', async () => {
		const deliveries = burstDeliveries(sandbox, 'twice', 30);
		const answers = await postBurst(webhookUrl(), sandbox.signingSecret, eachTwiceShuffled(deliveries), 50);
		expect(answers.every((answer) => answer.status === 200)).toBe(true);
		await expectOneReplyEach(sandbox.origin, deliveries, 8 * 60_000);

		const first = burstDeliveries(sandbox, 'burst30', 30);
		const again = await postBurst(webhookUrl(), sandbox.signingSecret, first, 20);
		expect(again.filter((answer) => answer.message !== ALREADY_ACCEPTED)).toEqual([]);
		await sleep(5_000);
		expect(notExactlyOnce(await repliesPerDelivery(sandbox.origin), first)).toEqual({});
	}, 12 * 60_000);
});
