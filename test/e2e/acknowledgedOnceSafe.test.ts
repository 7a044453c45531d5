/**
 * A delivery acknowledged once its run has ended, in a real n8n (the pinned version, its default
 * setup), with the sandbox delivering as the service does: to the Production URL (and the Test URL)
 * registered as endpoints, each signed with its endpoint's secret, an attempt not answered within the
 * answer timeout counted as failed, and the spec's retry schedule compressed (TIME_SCALE). n8n is
 * killed (SIGKILL) in the middle of runs, and stopped (SIGTERM) during a burst of 30 whose runs wait on
 * the request budget past n8n's graceful-shutdown time; after the restart and the sandbox's retries
 * every delivery has its effect (an auto-reply at the sandbox naming its id), a second time only where
 * n8n exited before it had marked the run's end in its store. Runs that end
 * together after the service stopped waiting for their answers, and n8n restarted before its retries:
 * none runs again. Then the user's Retry of a failed and of a crashed execution, as the editor calls
 * it, and both URLs of the trigger side by side.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';

import { startSandbox, type Sandbox } from '../../sandbox';
import { RETRY_DELAYS_SECONDS } from '../../sandbox/webhooks';
import { NODE_TYPES, buildPackage, installIntoN8n, sandboxCredential } from '../../scripts/n8n/agencyInbox';
import { N8N_WITHOUT_EDITOR, ensureN8n, startN8n, type RunningN8n, type WorkflowToImport } from '../../scripts/n8n/harness';
import { SELECTED_N8N_VERSION, captureOutput } from '../../scripts/n8n/install';
import { signWebhook } from '../../scripts/n8n/signedWebhook';
import { makeTempDir, removeTempDir } from '../../scripts/tempDirs';
import { burstDeliveries, burstReplyWorkflow, firstReplyTimes, notExactlyOnce, repliesPerDelivery, type BurstDelivery } from './bursts';
import { getJson, listExecutions, postJson, recordedOutput, sleep, waitFor, type ExecutionSummary } from './support';

const n8nVersion = SELECTED_N8N_VERSION;
const SETUP_TIMEOUT_MS = 30 * 60_000;
/** The service's schedule at 1/20: a failed attempt is retried after 0.25 s, 15 s, 90 s, 6 min, … */
const TIME_SCALE = 0.05;
/** n8n's graceful-shutdown time here (its default is 30 s); the burst's runs wait longer on the budget. */
const GRACEFUL_SHUTDOWN_SECONDS = 10;
/** The sandbox's answer timeout: long enough that no attempt times out before n8n is stopped. */
const ANSWER_TIMEOUT_MS = 60_000;
const REPLIES = {
	workflowId: 'e2eAckReplies01',
	webhookId: '5b0e6a52-7c1d-4e3f-9a8b-0c1d2e3f4c01',
	credential: { id: 'ackCredential30', name: 'Agency Inbox, 30 per minute' },
	requestsPerMinute: 30,
};
/** Its own budget (600 a minute), so its runs wait on the service alone. */
const TOGETHER = {
	workflowId: 'e2eAckTogether1',
	webhookId: '5b0e6a52-7c1d-4e3f-9a8b-0c1d2e3f4c03',
	credential: { id: 'ackCredential600', name: 'Agency Inbox, 600 per minute' },
	requestsPerMinute: 600,
	deliveries: 8,
};
/** The sandbox's answer timeout while those runs go on: the service has stopped waiting when they end. */
const SHORT_ANSWER_TIMEOUT_MS = 2_000;
const URLS = { workflowId: 'e2eAckBothUrls1', webhookId: '5b0e6a52-7c1d-4e3f-9a8b-0c1d2e3f4c02', credential: { id: 'ackCredentialUrls', name: 'Agency Inbox, both URLs' } };
const URLS_TRIGGER = 'Agency Inbox Trigger';
/** Another endpoint's secret, for the Test URL. */
const TEST_URL_SECRET = `whsec_${Buffer.from('agency-inbox-e2e-test-url-secret').toString('base64')}`;

/** The trigger alone: each delivery one run, shown by n8n's execution list. */
function bothUrlsWorkflow(): WorkflowToImport {
	return {
		id: URLS.workflowId,
		name: 'E2E: Test URL and Production URL',
		nodes: [
			{
				id: 'e2eac000-0000-4000-8000-000000000001',
				name: URLS_TRIGGER,
				type: NODE_TYPES.trigger,
				typeVersion: 1,
				position: [0, 0],
				webhookId: URLS.webhookId,
				parameters: { events: ['*'], options: {} },
				credentials: { agencyInboxApi: URLS.credential },
			},
		],
		connections: {},
		settings: { executionOrder: 'v1' },
	};
}

describe(`acknowledged once safe, in a real n8n ${n8nVersion}`, () => {
	let sandbox: Sandbox;
	let n8n: RunningN8n | undefined;
	let workDir: string;
	let userFolder: string;
	/** The sandbox's endpoint for the auto-reply's Production URL. */
	let repliesEndpoint: string;
	/** Starts n8n; again on the same port, where the service's endpoints point. */
	const start = async () => {
		const restartAt = Date.now();
		n8n = await startN8n({ userFolder, port: n8n?.port, env: { GENERIC_TIMEZONE: 'UTC', N8N_LOG_LEVEL: 'info', N8N_GRACEFUL_SHUTDOWN_TIMEOUT: String(GRACEFUL_SHUTDOWN_SECONDS), ...N8N_WITHOUT_EDITOR } });
		process.stderr.write(`n8n ready in ${((Date.now() - restartAt) / 1000).toFixed(0)} s\n`);
	};
	const productionUrl = (webhookId: string) => `${n8n!.url}/webhook/${webhookId}/webhook`;
	const executionsOf = (workflowId: string) => listExecutions(n8n!.url, n8n!.restHeaders, workflowId);
	const control = <T>(route: string, body: unknown) => postJson<T>(`${sandbox.origin}/_sandbox/${route}`, body);
	/** The service sends a chat message event to an auto-reply's endpoint; the id is the one its attempts carry. */
	const fire = async (delivery: BurstDelivery, endpointId: string) => {
		const data = { proposal: { uid: delivery.proposalUid }, chat: { id: delivery.roomId }, message: { text: 'Are you available?' } };
		return (await control<{ messageId: string }>('events', { type: 'chat.message.sent', data, endpointId })).messageId;
	};
	const fireAll = async (prefix: string, count: number, endpointId = repliesEndpoint) => {
		const ids: BurstDelivery[] = [];
		for (const delivery of burstDeliveries(sandbox, prefix, count)) ids.push({ ...delivery, deliveryId: await fire(delivery, endpointId) });
		return ids;
	};
	/** Waits for a reply per delivery (the sandbox retrying as the service does), then a while for any second one: the replies per delivery. */
	const effectsOf = async (deliveries: BurstDelivery[], timeoutMs: number) => {
		await waitFor(`a reply to each of ${deliveries.length} deliveries`, () => repliesPerDelivery(sandbox.origin), (counts) => deliveries.every((delivery) => counts.has(delivery.deliveryId)), timeoutMs);
		await sleep(RETRY_DELAYS_SECONDS[1] * 1000 * TIME_SCALE);
		return await repliesPerDelivery(sandbox.origin);
	};
	const expectOneEffectEach = async (deliveries: BurstDelivery[], timeoutMs: number) => {
		expect(notExactlyOnce(await effectsOf(deliveries, timeoutMs), deliveries)).toEqual({});
	};
	const running = async (workflowId: string) => (await executionsOf(workflowId)).filter((execution) => execution.status === 'running');

	beforeAll(async () => {
		const progress = (line: string) => process.stderr.write(`${line}\n`);
		await Promise.all([buildPackage(progress), ensureN8n(n8nVersion, progress)]);
		sandbox = await startSandbox({ requestsPerMinute: 0, webhookTimeScale: TIME_SCALE, webhookAnswerTimeoutMs: ANSWER_TIMEOUT_MS });
		workDir = makeTempDir('e2e-ack');
		userFolder = path.join(workDir, 'n8n');
		await installIntoN8n({
			userFolder,
			n8nVersion,
			credentials: [
				{ ...sandboxCredential(sandbox, REPLIES.requestsPerMinute), ...REPLIES.credential },
				{ ...sandboxCredential(sandbox, TOGETHER.requestsPerMinute), ...TOGETHER.credential },
				{ ...sandboxCredential(sandbox), ...URLS.credential, data: { ...sandboxCredential(sandbox).data, testWebhookSigningSecret: TEST_URL_SECRET } },
			],
			workflows: [burstReplyWorkflow(REPLIES.workflowId, REPLIES.webhookId, REPLIES.credential), burstReplyWorkflow(TOGETHER.workflowId, TOGETHER.webhookId, TOGETHER.credential), bothUrlsWorkflow()],
			publish: [REPLIES.workflowId, TOGETHER.workflowId, URLS.workflowId],
		});
		await start();
	}, SETUP_TIMEOUT_MS);

	afterAll(async () => {
		await n8n?.stop();
		await sandbox?.close();
		if (workDir) removeTempDir(workDir);
	});

	it('both URLs registered at the service, the same message at each: the test event is shown whatever production did, and the listening session leaves production as it was', async () => {
		const testUrl = `${n8n!.url}/webhook-test/${URLS.webhookId}/webhook`;
		await control('webhook-endpoints', { url: productionUrl(URLS.webhookId) });
		await control('webhook-endpoints', { url: testUrl, secret: TEST_URL_SECRET });
		const { messageId } = await control<{ messageId: string }>('events', { type: 'proposal.accepted', data: { proposal: { uid: 'prop-0001' } } });
		// Production runs it; the Test URL answers 404 (nobody listens), so the service retries it there.
		const ranInProduction = await waitFor('the production run', () => executionsOf(URLS.workflowId), (found) => found.some((execution) => execution.mode === 'webhook' && execution.status === 'success'));
		expect(await recordedOutput(n8n!, ranInProduction[0].id, URLS_TRIGGER)).toEqual([expect.objectContaining({ deliveryId: messageId })]);

		// Listen for test event, as the editor asks for it.
		const listening = await fetch(`${n8n!.url}/rest/workflows/${URLS.workflowId}/run`, { method: 'POST', headers: n8n!.restHeaders, body: JSON.stringify({ triggerToStartFrom: { name: URLS_TRIGGER } }) });
		expect(listening.status).toBe(200);
		const shown = await waitFor('the test run', () => executionsOf(URLS.workflowId), (found) => found.some((execution) => execution.mode === 'manual' && execution.status === 'success'));
		const testRun = shown.find((execution) => execution.mode === 'manual')!;
		expect(await recordedOutput(n8n!, testRun.id, URLS_TRIGGER)).toEqual([expect.objectContaining({ deliveryId: messageId })]);

		// The session has ended: the same message at the Production URL still starts no second run; a new one runs.
		await control('events', { type: 'proposal.accepted', data: { proposal: { uid: 'prop-0002' } } });
		const productionRuns = (found: ExecutionSummary[]) => found.filter((execution) => execution.mode === 'webhook');
		await waitFor('the second production run', () => executionsOf(URLS.workflowId), (found) => productionRuns(found).length === 2);
		const again = await fetch(productionUrl(URLS.webhookId), { method: 'POST', ...resignedAttempt(messageId) });
		expect({ status: again.status, body: await again.json() }).toEqual({ status: 200, body: { message: 'Delivery already run; no second run' } });
		await sleep(2_000);
		expect(productionRuns(await executionsOf(URLS.workflowId))).toHaveLength(2);
	});

	it('SIGKILL while runs wait for the service: after the restart and the retries, each delivery has its effect once; n8n lists the cut runs as crashed', async () => {
		repliesEndpoint = (await control<{ id: string }>('webhook-endpoints', { url: productionUrl(REPLIES.webhookId) })).id;
		// Each run's Get Proposal is held by the service until released, so the runs are in their middle when n8n is killed.
		await control('faults', { kind: 'hold', method: 'GET', pathPrefix: '/v1/agency/proposals/', holdMs: 600_000, count: 5 });
		const deliveries = await fireAll('killed', 5);
		// In their middle once the service holds all 5 Get Proposals: each trigger step, and its record in n8n's store, is done.
		await waitFor('5 runs in their middle', () => getJson<{ data: unknown[] }>(`${sandbox.origin}/_sandbox/faults`), (faults) => faults.data.length === 0, 180_000);
		expect(await running(REPLIES.workflowId)).toHaveLength(5);
		await n8n!.kill();
		await fetch(`${sandbox.origin}/_sandbox/faults`, { method: 'DELETE' });
		await control('faults/release', {});
		expect((await repliesPerDelivery(sandbox.origin)).size).toBe(0);
		await start();
		await expectOneEffectEach(deliveries, 6 * 60_000);
		const crashed = (await executionsOf(REPLIES.workflowId)).filter((execution) => execution.status === 'crashed');
		expect(crashed).toHaveLength(5);
	});

	it("the user's Retry of a crashed execution runs the delivery again and reaches the next node", async () => {
		const [crashed] = (await executionsOf(REPLIES.workflowId)).filter((execution) => execution.status === 'crashed');
		const before = await repliesPerDelivery(sandbox.origin);
		const retried = await retry(crashed.id);
		expect(retried).toMatchObject({ status: 'success', retryOf: crashed.id });
		const [reply] = await recordedOutput(n8n!, retried.id, 'Send Auto-Reply');
		const deliveryId = String(reply.message).replace('Auto-reply to delivery ', '');
		// The service's re-delivery had run it once already; the Retry runs it once more, as asked.
		expect(before.get(deliveryId)).toBe(1);
		expect((await repliesPerDelivery(sandbox.origin)).get(deliveryId)).toBe(2);
		// Its item names the execution that ran the delivery again: the one whose reply went out.
		const [retriedItem] = await recordedOutput(n8n!, retried.id, 'Client Message');
		const ranAgainIn = String(retriedItem.ranAgainIn);
		expect(ranAgainIn).not.toBe(crashed.id);
		expect(await recordedOutput(n8n!, ranAgainIn, 'Send Auto-Reply')).toEqual([expect.objectContaining({ message: `Auto-reply to delivery ${deliveryId}` })]);
	});

	it("the user's Retry of a failed execution reaches the next node; the service's re-delivery of it started no run", async () => {
		await control('faults', { kind: 'status', status: 500, method: 'POST', pathPrefix: '/v1/master-inbox/rooms/', count: 1 });
		const [delivery] = await fireAll('failed', 1);
		const failed = await waitFor('the failed run', () => executionsOf(REPLIES.workflowId), (found) => found.some((execution) => execution.status === 'error'));
		const failedRun = failed.find((execution) => execution.status === 'error')!;
		// n8n answered the failed run 500; the service's retry 0.25 s later was answered 200 without a run.
		const attempts = await waitFor('the re-delivery', () => deliveriesTo(delivery.deliveryId), (found) => found.some((attempt) => attempt.status === 200));
		expect(attempts.map((attempt) => attempt.status)).toEqual([500, 200]);
		const retried = await retry(failedRun.id);
		expect(retried).toMatchObject({ status: 'success', retryOf: failedRun.id });
		expect(await recordedOutput(n8n!, retried.id, 'Send Auto-Reply')).toEqual([expect.objectContaining({ message: `Auto-reply to delivery ${delivery.deliveryId}` })]);
		expect((await repliesPerDelivery(sandbox.origin)).get(delivery.deliveryId)).toBe(1);
	});

	it(`${TOGETHER.deliveries} runs that end together after the service stopped waiting (${SHORT_ANSWER_TIMEOUT_MS / 1000} s), n8n restarted before its retries: no delivery runs again`, async () => {
		const endpointId = (await control<{ id: string }>('webhook-endpoints', { url: productionUrl(TOGETHER.webhookId) })).id;
		// The service's retries wait until n8n has restarted, whatever the load: each delivery meets
		// n8n once before the restart.
		await control('webhook-settings', { answerTimeoutMs: SHORT_ANSWER_TIMEOUT_MS, holdRetries: true });
		try {
			// The service stores each reply and answers it 5 s later: the runs end within moments of each other.
			await control('faults', { kind: 'hold', method: 'POST', pathPrefix: '/v1/master-inbox/rooms/', holdMs: 5_000, count: TOGETHER.deliveries });
			const deliveries = await fireAll('together', TOGETHER.deliveries, endpointId);
			const isOurs = (attempt: { messageId: string }) => deliveries.some((delivery) => delivery.deliveryId === attempt.messageId);
			await waitFor('a first attempt of each delivery', deliveryAttempts, (found) => found.filter(isOurs).length >= TOGETHER.deliveries);
			// A first attempt that a busy n8n answered with an error started no run: that delivery runs
			// after the restart, like any retry. The others' runs outlast the service's wait.
			const ended = await waitFor('the runs started before the restart, all ended', () => executionsOf(TOGETHER.workflowId), (found) => found.length > 0 && found.every((execution) => execution.status === 'success'));
			const started = ended.length;
			// n8n stops once the trigger has marked each run's end in the store, which it does when it has
			// seen n8n's answer (a run that ended in n8n's last moment runs again: the README's window).
			await waitFor("each run's delivery recorded and its end marked in n8n's deduplication store", () => storeEntriesOf(TOGETHER.workflowId, deliveries), (entries) => entries.recorded === started && entries.open === 0);
			// One reply per run so far; a delivery whose first attempt started no run has none yet.
			const repliesBeforeRestart = await repliesPerDelivery(sandbox.origin);
			const repliesBefore = deliveries.map((delivery) => repliesBeforeRestart.get(delivery.deliveryId) ?? 0);
			expect({ replies: repliesBefore.reduce((sum, count) => sum + count, 0), mostForOneDelivery: Math.max(...repliesBefore) }).toEqual({ replies: started, mostForOneDelivery: 1 });
			expect((await deliveryAttempts()).filter((attempt) => isOurs(attempt) && attempt.status === 200)).toEqual([]);
			process.stderr.write(`runs that ended together before the restart: ${started} of ${TOGETHER.deliveries}\n`);
			await n8n!.stop();
			await start();
			// The service waits as long as before the test again: a busy n8n may take seconds to answer.
			await control('webhook-settings', { answerTimeoutMs: ANSWER_TIMEOUT_MS, holdRetries: false });
			// Each retry is answered 200: "already run", or by a run that stopped at the trigger.
			await waitFor('a 200 for each retry', deliveryAttempts, (found) => deliveries.every((delivery) => found.some((attempt) => attempt.messageId === delivery.deliveryId && attempt.status === 200)));
			expect(notExactlyOnce(await repliesPerDelivery(sandbox.origin), deliveries)).toEqual({});
		} finally {
			await control('webhook-settings', { answerTimeoutMs: ANSWER_TIMEOUT_MS, holdRetries: false });
		}
	});

	it(`SIGTERM during a burst of 30 whose runs wait on the budget past n8n's ${GRACEFUL_SHUTDOWN_SECONDS} s graceful shutdown: each delivery has its effect after the restart and the retries, a second time only when n8n exited before marking its run's end in its store`, async () => {
		const firedAt = Date.now() - 1_000;
		const deliveries = await fireAll('stopped', 30);
		// 30 requests a minute: each run's Get Proposal goes out at once, its Send Message a minute later.
		// Every delivery's run started, and runs still wait (on a busy machine the starts take minutes, and the first runs may end meanwhile).
		const burstRuns = async () => (await executionsOf(REPLIES.workflowId)).filter((execution) => Date.parse(execution.createdAt ?? '') >= firedAt);
		await waitFor('the 30 runs started, some waiting on the budget', burstRuns, (found) => found.length >= 30 && found.some((execution) => execution.status === 'running'), 5 * 60_000);
		const stoppedAt = Date.now();
		await n8n!.stop((GRACEFUL_SHUTDOWN_SECONDS + 30) * 1000);
		const log = await fs.readFile(n8n!.logFile, 'utf8');
		expect(log).toContain(`Shutdown timed out after ${GRACEFUL_SHUTDOWN_SECONDS} seconds`);
		const repliedBefore = await repliesPerDelivery(sandbox.origin);
		const storeAtExit = await storeStatesOf(REPLIES.workflowId, deliveries);
		const endMarked = deliveries.filter((delivery) => storeAtExit.get(delivery.deliveryId) === 'ended').map((delivery) => delivery.deliveryId);
		process.stderr.write(`n8n exited ${((Date.now() - stoppedAt) / 1000).toFixed(1)} s after SIGTERM; ${deliveries.filter((delivery) => repliedBefore.has(delivery.deliveryId)).length} of the 30 had replied, ${endMarked.length} runs' ends were marked in the store\n`);
		await start();
		const replies = await effectsOf(deliveries, 10 * 60_000);
		// A delivery whose run's end n8n had marked in its store before it exited replied once. A run cut
		// after its reply was stored, or one that ended as n8n stopped, before it could mark the end, runs
		// again (the window the README names): at most twice. None lost.
		const firstReplyAt = await firstReplyTimes(sandbox.origin);
		const notOnce = Object.entries(notExactlyOnce(replies, deliveries)).map(([deliveryId, count]) => ({ deliveryId, count, endMarked: endMarked.includes(deliveryId), firstReplyAfterSigtermMs: (firstReplyAt.get(deliveryId) ?? NaN) - stoppedAt }));
		process.stderr.write(`SIGTERM burst: ${notOnce.length} of 30 replied twice, first replies ${JSON.stringify(notOnce.map((delivery) => delivery.firstReplyAfterSigtermMs))} ms after SIGTERM\n`);
		expect(notOnce.filter((delivery) => delivery.count !== 2 || delivery.endMarked)).toEqual([]);
	}, 15 * 60_000);

	/** The service's next attempt of the first message at the Production URL, signed anew. */
	function resignedAttempt(messageId: string) {
		const now = Math.floor(Date.now() / 1000);
		const body = JSON.stringify({ type: 'proposal.accepted', timestamp: new Date().toISOString(), data: { proposal: { uid: 'prop-0001' } } });
		return { headers: { 'content-type': 'application/json', 'webhook-id': messageId, 'webhook-timestamp': String(now), 'webhook-signature': signWebhook(sandbox.signingSecret, messageId, now, body) }, body };
	}

	/**
	 * What n8n's deduplication store holds of each delivery: nothing, its entry with the open entry (its
	 * run started, its end not marked) or its entry alone (its run's end marked). The store is n8n's
	 * SQLite table `processed_data`, whose entries n8n keeps as md5 hashes (base64); a run records its
	 * delivery and an open entry, and the trigger removes the open entry once it has seen the run end
	 * (onceOnly/defaultSetupClaim.ts). Read beside n8n with the built-in SQLite of n8n's Node.
	 */
	async function storeStatesOf(workflowId: string, deliveries: BurstDelivery[]): Promise<Map<string, 'none' | 'open' | 'ended'>> {
		const hash = (value: string) => createHash('md5').update(value).digest('base64');
		const script = `
			const { DatabaseSync } = require('node:sqlite');
			const [database, workflowId] = process.argv.slice(1);
			const db = new DatabaseSync(database, { readOnly: true });
			console.log(JSON.stringify(db.prepare('SELECT value FROM processed_data WHERE workflowId = ?').all(workflowId).flatMap(({ value }) => JSON.parse(value).data ?? [])));
			db.close();`;
		const runtime = await ensureN8n(n8nVersion);
		const output = await captureOutput(runtime.nodeBinary, ['--no-warnings', '-e', script, path.join(userFolder, '.n8n', 'database.sqlite'), workflowId], userFolder, runtime.env);
		const held = new Set(JSON.parse(output.trim().split('\n').pop()!) as string[]);
		return new Map(deliveries.map(({ deliveryId }) => [deliveryId, !held.has(hash(deliveryId)) ? 'none' : held.has(hash(`${deliveryId} open`)) ? 'open' : 'ended']));
	}

	/** How many of the deliveries the store records, and how many of those have their open entry. */
	async function storeEntriesOf(workflowId: string, deliveries: BurstDelivery[]): Promise<{ recorded: number; open: number }> {
		const states = [...(await storeStatesOf(workflowId, deliveries)).values()];
		return { recorded: states.filter((state) => state !== 'none').length, open: states.filter((state) => state === 'open').length };
	}

	/** What the sandbox recorded of the attempts of every message. */
	async function deliveryAttempts() {
		return (await getJson<{ data: Array<{ messageId: string; status?: number }> }>(`${sandbox.origin}/_sandbox/deliveries`)).data;
	}

	/** What the sandbox recorded of the attempts of one message. */
	async function deliveriesTo(messageId: string) {
		return (await deliveryAttempts()).filter((attempt) => attempt.messageId === messageId);
	}

	/** Executions → Retry (with the original workflow), as the editor calls it: the run it started, once ended. */
	async function retry(executionId: string): Promise<ExecutionSummary> {
		const response = await fetch(`${n8n!.url}/rest/executions/${executionId}/retry`, { method: 'POST', headers: n8n!.restHeaders, body: JSON.stringify({ loadWorkflow: false }) });
		if (!response.ok) throw new Error(`retry of ${executionId}: ${response.status} ${await response.text()}`);
		return ((await response.json()) as { data: ExecutionSummary }).data;
	}
});
