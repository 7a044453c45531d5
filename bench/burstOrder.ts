/**
 * Oldest first: a burst of 30 chat deliveries into the chat auto-reply (trigger → Get Proposal → Send
 * Message, two requests a run) with the service at 20 requests a minute per key, in a real n8n's default
 * setup and in queue mode (a main, 2 workers, a webhook process; Processes Sharing This Key = 2). Prints
 * the mean time from a delivery's sending to its reply beside the oldest-first schedule over the same
 * request times (the k-th delivery answered by the 2k-th request, not before it was sent), how many
 * replies came after a reply to a later delivery, and when the deliveries were answered (the trigger
 * answers 200 once a delivery's run has ended), how many of those answers would come after the
 * service's answer timeout (15 s assumed, the sandbox's) and when the service would then count each
 * delivery acknowledged: its retry 5 s after the failed attempt gets 409 while the run goes on (another
 * failure, next retry 5 minutes later) and 200 once it ended. With BENCH_REFERENCE=<commit> the default
 * setup first runs the same burst into that commit's trigger (bench/support/referencePackage.ts), in
 * the same n8n with the same action nodes, after one delivery into each and a minute apart. In queue
 * mode also what the claim across processes costs: the median duration of a run of the trigger alone
 * on a worker beside a run of n8n's Webhook node alone. Prints; never fails.
 *
 *   node --require ts-node/register/transpile-only bench/burstOrder.ts
 *
 * Environment: AGENCY_INBOX_N8N_VERSION, BENCH_BURST (deliveries, default 30), BENCH_SETUPS
 * ("default,queue" by default), BENCH_ALONE_RUNS (queue mode, default 10), BENCH_REFERENCE (a commit).
 */
import path from 'node:path';

import { startSandbox, type Sandbox } from '../sandbox';
import type { RequestLogEntry } from '../sandbox/core';
import { DEFAULT_ANSWER_TIMEOUT_MS, RETRY_DELAYS_SECONDS } from '../sandbox/webhooks';
import { NODE_TYPES, SAMPLE_CREDENTIAL, buildPackage, installIntoN8n, sandboxCredential } from '../scripts/n8n/agencyInbox';
import { ensureN8n, startN8n, type RunningN8n, type WorkflowToImport } from '../scripts/n8n/harness';
import { SELECTED_N8N_VERSION } from '../scripts/n8n/install';
import { startQueueTopology } from '../scripts/n8n/queue';
import { signedDelivery } from '../scripts/n8n/signedWebhook';
import { makeTempDir, removeTempDir } from '../scripts/tempDirs';
import { burstDeliveries, burstReplyWorkflow, firstReplyTimes, postBurst, type BurstDelivery } from '../test/e2e/bursts';
import { getJson } from '../test/e2e/support';
import { finishedRunsAfter, median, newestExecutionId, runDurationMs } from './support/n8nRuns';
import { REFERENCE_COMMIT, installReferencePackage, withReferenceTrigger } from './support/referencePackage';

const n8nVersion = SELECTED_N8N_VERSION;
const burstSize = Number(process.env.BENCH_BURST || 30);
const setups = (process.env.BENCH_SETUPS || 'default,queue').split(',');
const aloneRuns = Number(process.env.BENCH_ALONE_RUNS || 10);
const TARGET_RATIO = 1.1;
const REQUESTS_PER_MINUTE = 20;
const REQUESTS_PER_RUN = 2;
const SPACING_MS = 100;
const BURST_WORKFLOW = 'benchBurstOrder1';
const BURST_WEBHOOK_ID = '5b0e6a52-7c1d-4e3f-9a8b-0c1d2e3f4c01';
const REFERENCE_BURST = { workflowId: 'benchBurstRefer1', webhookId: '5b0e6a52-7c1d-4e3f-9a8b-0c1d2e3f4c04' };
/** Lets the limiter's rolling minute of one burst pass before the next burst starts. */
const BETWEEN_BURSTS_MS = 60_000;
const ALONE = { trigger: 'benchAloneTrig01', webhookNode: 'benchAloneHook01', triggerWebhookId: '5b0e6a52-7c1d-4e3f-9a8b-0c1d2e3f4c02', webhookPath: 'bench-alone' };
const REPLY_WAIT_MS = 10 * 60_000;

interface Fairness {
	/** From a delivery's sending to its 200 (its run's end): median and last. */
	answeredMedianMs?: number;
	answeredLastMs?: number;
	/** Answers after the service's answer timeout, and when the service would count the last delivery acknowledged. */
	pastTimeout?: number;
	acknowledgedLastMs?: number;
	meanMs: number;
	oldestFirstMs: number;
	outOfOrder: number;
	lastReplyMs: number;
	floorMs: number;
}

/**
 * When the service counts a delivery acknowledged, from n8n's answer to its first attempt (ms after
 * sending): an attempt unanswered within the answer timeout fails; each retry (after the spec's waits)
 * gets 409 while the run goes on, a failure again, and 200 once the run has ended.
 */
export function acknowledgedAfterMs(answeredMs: number, timeoutMs = DEFAULT_ANSWER_TIMEOUT_MS): number {
	if (answeredMs <= timeoutMs) return answeredMs;
	let failedAt = timeoutMs;
	for (const waitSeconds of RETRY_DELAYS_SECONDS) {
		const retryAt = failedAt + waitSeconds * 1000;
		if (retryAt >= answeredMs) return retryAt;
		failedAt = retryAt;
	}
	return Infinity;
}

/**
 * The mean time from acceptance to reply, against the oldest-first schedule over the same request
 * times: the k-th accepted delivery gets the (2k-1)-th and 2k-th requests, so its reply comes with the
 * 2k-th request at the earliest (and not before it was accepted).
 */
export function fairness(accepted: Array<{ deliveryId: string; at: number }>, replies: Map<string, number>, requestTimes: number[]): Fairness {
	const inOrder = [...accepted].sort((a, b) => a.at - b.at);
	const times = [...requestTimes].sort((a, b) => a - b);
	const actual = inOrder.map((delivery) => replies.get(delivery.deliveryId)! - delivery.at);
	const ideal = inOrder.map((delivery, index) => Math.max(times[Math.min(times.length - 1, REQUESTS_PER_RUN * (index + 1) - 1)], delivery.at) - delivery.at);
	const replyTimes = inOrder.map((delivery) => replies.get(delivery.deliveryId)!);
	const outOfOrder = replyTimes.filter((at, index) => replyTimes.slice(index + 1).some((later) => later < at)).length;
	const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
	return {
		meanMs: mean(actual),
		oldestFirstMs: mean(ideal),
		outOfOrder,
		lastReplyMs: Math.max(...replyTimes) - inOrder[0].at,
		// The least time a limiter allows for these requests at 20 a minute: (ceil(N/R) - 1) minutes.
		floorMs: (Math.ceil((REQUESTS_PER_RUN * inOrder.length) / REQUESTS_PER_MINUTE) - 1) * 60_000,
	};
}

async function burstAndReplies(webhookUrl: string, sandbox: Sandbox, prefix: string, size = burstSize): Promise<Fairness> {
	const deliveries: BurstDelivery[] = burstDeliveries(sandbox, prefix, size);
	const requestsBefore = (await getJson<{ data: RequestLogEntry[] }>(`${sandbox.origin}/_sandbox/requests`)).data.length;
	const answers = await postBurst(webhookUrl, sandbox.signingSecret, deliveries, SPACING_MS);
	const refused = answers.filter((answer) => answer.status !== 200);
	if (refused.length) throw new Error(`${refused.length} deliveries were not accepted: ${JSON.stringify(refused.slice(0, 3))}`);
	const deadline = Date.now() + REPLY_WAIT_MS;
	let replies = await firstReplyTimes(sandbox.origin);
	while (!deliveries.every((delivery) => replies.has(delivery.deliveryId))) {
		if (Date.now() > deadline) throw new Error(`${deliveries.filter((delivery) => !replies.has(delivery.deliveryId)).length} deliveries got no reply in ${REPLY_WAIT_MS / 60_000} min`);
		await new Promise((resolve) => setTimeout(resolve, 1_000));
		replies = await firstReplyTimes(sandbox.origin);
	}
	const requests = (await getJson<{ data: RequestLogEntry[] }>(`${sandbox.origin}/_sandbox/requests`)).data.slice(requestsBefore);
	const answered = answers.map((answer) => answer.answeredAt - answer.sentAt).sort((a, b) => a - b);
	return {
		...fairness(
			answers.map((answer) => ({ deliveryId: answer.deliveryId, at: answer.sentAt })),
			replies,
			requests.filter((request) => request.status !== 429).map((request) => Date.parse(request.at)),
		),
		answeredMedianMs: median(answered),
		answeredLastMs: answered[answered.length - 1],
		pastTimeout: answered.filter((ms) => ms > DEFAULT_ANSWER_TIMEOUT_MS).length,
		acknowledgedLastMs: Math.max(...answered.map((ms) => acknowledgedAfterMs(ms))),
	};
}

function describe(setup: string, result: Fairness): string {
	const ratio = result.meanMs / result.oldestFirstMs;
	return (
		`  ${setup}: mean delivery to reply ${(result.meanMs / 1000).toFixed(1)} s, oldest first ${(result.oldestFirstMs / 1000).toFixed(1)} s: ` +
		`${ratio.toFixed(2)} (target <= ${TARGET_RATIO}: ${ratio <= TARGET_RATIO ? 'MET' : 'NOT MET'}); ${result.outOfOrder} replies out of order; ` +
		`last reply ${(result.lastReplyMs / 1000).toFixed(0)} s after the first delivery (the limiter's floor ${result.floorMs / 1000} s); ` +
		`answered 200 ${((result.answeredMedianMs ?? 0) / 1000).toFixed(1)} s (median) and ${((result.answeredLastMs ?? 0) / 1000).toFixed(1)} s (last) after sending, ` +
		`${result.pastTimeout} of ${burstSize} after the service's answer timeout (${DEFAULT_ANSWER_TIMEOUT_MS / 1000} s assumed): the last acknowledged for the service ${((result.acknowledgedLastMs ?? 0) / 1000).toFixed(0)} s after sending`
	);
}

function aloneWorkflows(credential: { id: string; name: string }): WorkflowToImport[] {
	return [
		{
			id: ALONE.trigger,
			name: 'Bench: the trigger alone',
			nodes: [{ id: '5b0e6a52-0000-4000-8000-00000000c101', name: 'Agency Inbox Trigger', type: NODE_TYPES.trigger, typeVersion: 1, position: [0, 0], webhookId: ALONE.triggerWebhookId, parameters: { events: ['*'], options: {} }, credentials: { agencyInboxApi: credential } }],
			connections: {},
		},
		{
			id: ALONE.webhookNode,
			name: "Bench: n8n's Webhook node alone",
			nodes: [{ id: '5b0e6a52-0000-4000-8000-00000000c102', name: 'Webhook', type: 'n8n-nodes-base.webhook', typeVersion: 2, position: [0, 0], webhookId: '5b0e6a52-0000-4000-8000-00000000c103', parameters: { httpMethod: 'POST', path: ALONE.webhookPath, responseMode: 'onReceived', options: {} } }],
			connections: {},
		},
	];
}

/** Median run durations of the trigger alone and of n8n's Webhook node alone, one delivery at a time, in turn. */
async function runsAlone(main: RunningN8n, webhookOrigin: string, signingSecret: string): Promise<{ trigger: number; webhookNode: number }> {
	const durations = { trigger: [] as number[], webhookNode: [] as number[] };
	for (let run = 0; run < aloneRuns; run++) {
		for (const [kind, workflowId, url] of [
			['trigger', ALONE.trigger, `${webhookOrigin}/webhook/${ALONE.triggerWebhookId}/webhook`],
			['webhookNode', ALONE.webhookNode, `${webhookOrigin}/webhook/${ALONE.webhookPath}`],
		] as const) {
			const before = await newestExecutionId(main, workflowId);
			const delivery = signedDelivery(url, signingSecret, 'bid_intent.scheduled', { jobUid: 'job-1', bidId: `bid-${run}` });
			const response = await fetch(delivery.url, { method: 'POST', headers: { 'content-type': 'application/json', ...delivery.headers }, body: delivery.body });
			if (!response.ok) throw new Error(`${workflowId}: ${response.status} ${await response.text()}`);
			const [execution] = await finishedRunsAfter(main, workflowId, before, 1, 60_000, 50);
			durations[kind].push(runDurationMs(execution));
		}
	}
	return { trigger: median(durations.trigger), webhookNode: median(durations.webhookNode) };
}

async function defaultSetup(summary: string[]): Promise<void> {
	const sandbox = await startSandbox({ requestsPerMinute: REQUESTS_PER_MINUTE });
	const workDir = makeTempDir('bench-burst-order');
	const userFolder = path.join(workDir, 'n8n');
	let n8n: RunningN8n | undefined;
	try {
		if (REFERENCE_COMMIT) await installReferencePackage(userFolder, REFERENCE_COMMIT, n8nVersion);
		const reference = REFERENCE_COMMIT ? [withReferenceTrigger(burstReplyWorkflow(REFERENCE_BURST.workflowId, REFERENCE_BURST.webhookId, SAMPLE_CREDENTIAL))] : [];
		await installIntoN8n({
			userFolder,
			n8nVersion,
			credentials: [sandboxCredential(sandbox, REQUESTS_PER_MINUTE)],
			workflows: [burstReplyWorkflow(BURST_WORKFLOW, BURST_WEBHOOK_ID, SAMPLE_CREDENTIAL), ...reference],
			publish: [BURST_WORKFLOW, ...reference.map((workflow) => workflow.id)],
		});
		n8n = await startN8n({ userFolder });
		if (REFERENCE_COMMIT) {
			// A delivery into each first, so that neither burst meets an n8n that has run nothing yet.
			await burstAndReplies(`${n8n.url}/webhook/${REFERENCE_BURST.webhookId}/webhook`, sandbox, 'warm_reference', 1);
			await burstAndReplies(`${n8n.url}/webhook/${BURST_WEBHOOK_ID}/webhook`, sandbox, 'warm_default', 1);
			await new Promise((resolve) => setTimeout(resolve, BETWEEN_BURSTS_MS));
			summary.push(describe(`n8n's default setup, the trigger of ${REFERENCE_COMMIT}`, await burstAndReplies(`${n8n.url}/webhook/${REFERENCE_BURST.webhookId}/webhook`, sandbox, 'order_reference')));
			await new Promise((resolve) => setTimeout(resolve, BETWEEN_BURSTS_MS));
		}
		summary.push(describe("n8n's default setup", await burstAndReplies(`${n8n.url}/webhook/${BURST_WEBHOOK_ID}/webhook`, sandbox, 'order_default')));
	} finally {
		await n8n?.stop();
		await sandbox.close();
		removeTempDir(workDir);
	}
}

async function queueMode(summary: string[]): Promise<void> {
	const sandbox = await startSandbox({ requestsPerMinute: REQUESTS_PER_MINUTE });
	const workDir = makeTempDir('bench-burst-order-queue');
	const credential = sandboxCredential(sandbox, REQUESTS_PER_MINUTE);
	const topology = await startQueueTopology({
		workDir,
		n8nVersion,
		credentials: [{ ...credential, data: { ...credential.data, processesSharingKey: 2 } }],
		workflows: [burstReplyWorkflow(BURST_WORKFLOW, BURST_WEBHOOK_ID, SAMPLE_CREDENTIAL), ...aloneWorkflows(SAMPLE_CREDENTIAL)],
		publish: [BURST_WORKFLOW, ALONE.trigger, ALONE.webhookNode],
		log: (line) => console.log(`  ${line}`),
	}).catch(async (error) => {
		await sandbox.close();
		removeTempDir(workDir);
		throw error;
	});
	try {
		const webhookOrigin = topology.webhookProcesses[0].current.url;
		const alone = await runsAlone(topology.main.current, webhookOrigin, sandbox.signingSecret);
		summary.push(
			`  queue mode, the claim across processes: a run of the trigger alone ${alone.trigger.toFixed(0)} ms (median of ${aloneRuns}), of n8n's Webhook node alone ${alone.webhookNode.toFixed(0)} ms: +${(alone.trigger - alone.webhookNode).toFixed(0)} ms a run`,
		);
		summary.push(describe('queue mode (2 workers, sharing the key)', await burstAndReplies(`${webhookOrigin}/webhook/${BURST_WEBHOOK_ID}/webhook`, sandbox, 'order_queue')));
	} finally {
		await topology.stop();
		await sandbox.close();
		removeTempDir(workDir);
	}
}

async function main(): Promise<void> {
	console.log(`Burst order: ${burstSize} deliveries ${SPACING_MS} ms apart, the chat auto-reply at ${REQUESTS_PER_MINUTE} requests a minute, n8n ${n8nVersion} (${setups.join(', ')})`);
	await Promise.all([buildPackage(() => undefined), ensureN8n(n8nVersion, (line) => console.log(line))]);
	const summary: string[] = [];
	try {
		if (setups.includes('default')) await defaultSetup(summary);
		if (setups.includes('queue')) await queueMode(summary);
	} finally {
		if (summary.length) console.log(`\nBurst order, n8n ${n8nVersion}:\n${summary.join('\n')}`);
	}
}

if (require.main === module) {
	main().catch((error) => console.log(`Burst order: not measured: ${error.stack ?? error.message}`));
}
