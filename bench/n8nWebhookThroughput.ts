/**
 * Webhook deliveries into the Agency Inbox Trigger against two other receivers, side by side in one
 * real n8n (the default setup: one process serves webhooks and runs them), with the same signed
 * payload and the same loopback load generator:
 * - the minimal community trigger, generated at run time as its own package: its webhook() only
 *   returns the body. It pays what n8n 2.x puts on any community trigger (an expression isolate for
 *   the webhook phase), so ours against it is the cost of our own work: verification, the memory of
 *   ids, the claim in n8n's deduplication store, and the static data save n8n makes after each run;
 * - a flow built by hand from n8n's nodes: Webhook (raw body) → Extract From File → Crypto (HMAC) →
 *   IF, what a user would build to check signatures without our node.
 * Ours runs three times, its store row (n8n's deduplication store, `processed_data`) empty, half full
 * and full (STORE_ENTRIES, filled before n8n starts; each run records its delivery there),
 * each workflow's static data holding a day of ids at BENCH_DELIVERIES_PER_DAY (the service's usual
 * 10,000), and a fourth time with a day of 100,000 (n8n reads a workflow's whole static data twice per
 * delivery and writes it after each run). Ours answers a delivery once its run has ended; the other two
 * on receipt. With BENCH_REFERENCE=<commit>, that commit's trigger too (store empty, the same day of
 * ids; bench/support/referencePackage.ts), e.g. one that answered on receipt. Per receiver: deliveries
 * answered and runs finished per second under load (BENCH_CONCURRENCY in flight), n8n's CPU time per
 * delivery, the answer time (sending to answer) and the median run duration (n8n's start to stop of each
 * run), under load and alone (one delivery at a time). Prints the figures beside the targets; never fails.
 *
 *   node --require ts-node/register/transpile-only bench/n8nWebhookThroughput.ts
 *
 * Environment: AGENCY_INBOX_N8N_VERSION, BENCH_DELIVERIES (per receiver and round, default 200),
 * BENCH_CONCURRENCY (default 8), BENCH_ROUNDS (default 2), BENCH_ALONE_RUNS (default 12),
 * BENCH_DELIVERIES_PER_DAY (default 10000), BENCH_N8N_ENV (JSON of extra n8n variables), BENCH_REFERENCE
 * (a commit).
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { STORE_ENTRIES } from '../nodes/AgencyInboxTrigger/onceOnly/storeLine';
import { startSandbox } from '../sandbox';
import { NODE_TYPES, SAMPLE_CREDENTIAL, buildPackage, installIntoN8n, triggerWebhooks } from '../scripts/n8n/agencyInbox';
import { ensureN8n, prepareUserFolder, startN8n, type RunningN8n, type WorkflowToImport } from '../scripts/n8n/harness';
import { SELECTED_N8N_VERSION, captureOutput } from '../scripts/n8n/install';
import { runLoad, type PreparedRequest } from '../scripts/n8n/loadGenerator';
import { signedDelivery } from '../scripts/n8n/signedWebhook';
import { TRIGGER_NODE_NAME, oneDayOfDeliveries, serviceDeliveryId, staticDataWith } from './deliveryMemory';
import { loadSettings } from './support/loadSettings';
import { MINIMAL_WORKFLOW, minimalTriggerUrl, writeMinimalTriggerPackage } from './support/minimalTrigger';
import { cpuMsOf, finishedRunsAfter, median, newestExecutionId, runDurationMs } from './support/n8nRuns';
import { REFERENCE_COMMIT, installReferencePackage, withReferenceTrigger } from './support/referencePackage';

const TARGETS = { processedRatio: 0.9, aloneExtraMs: 100, underLoadRatio: 2 };
const n8nVersion = SELECTED_N8N_VERSION;
const { deliveriesPerRound, concurrency, rounds, aloneRuns } = loadSettings({ deliveriesPerRound: 200, aloneRuns: 12 });
/** The service's usual traffic (README), and the day of 100,000 of issue 28 for one more receiver. */
const deliveriesPerDay = Number(process.env.BENCH_DELIVERIES_PER_DAY || 10_000);
const busyDay = 100_000;
const extraN8nEnv = JSON.parse(process.env.BENCH_N8N_ENV || '{}') as Record<string, string>;
const ROUND_TIME_LIMIT_MS = 120_000;
const WARM_UP_DELIVERIES = 30;

const EVENT_TYPE = 'chat.message.sent';
const EVENT_DATA = { proposal: { uid: 'prop-0001' }, message: { text: 'Could we schedule a call this week?' }, chat: { id: 'room-001' } };

const HAND_BUILT_PATH = 'bench-hand-built';

type Kind = 'ours' | 'reference' | 'minimal' | 'handBuilt';

interface Receiver {
	label: string;
	kind: Kind;
	workflow: WorkflowToImport;
	/** Entries put into the trigger's store row before n8n starts. */
	storeEntries?: number;
	url?: string;
}

function ourWorkflow(suffix: string, serial: number, staticData: object): WorkflowToImport {
	return {
		id: `benchOurs${suffix.padEnd(7, '0')}`,
		name: `Bench: Agency Inbox Trigger (store ${suffix.toLowerCase()})`,
		nodes: [
			{
				id: `9a8b7c6d-0000-4000-8000-00000000b0${serial}1`,
				name: TRIGGER_NODE_NAME,
				type: NODE_TYPES.trigger,
				typeVersion: 1,
				position: [0, 0],
				webhookId: `9a8b7c6d-0000-4000-8000-00000000a0${serial}1`,
				parameters: { events: [EVENT_TYPE], options: {} },
				credentials: { agencyInboxApi: { id: SAMPLE_CREDENTIAL.id, name: SAMPLE_CREDENTIAL.name } },
			},
		],
		connections: {},
		staticData,
	};
}

/**
 * Signature checking built from n8n's nodes. Crypto takes the secret as text, not base64-decoded as
 * the scheme wants, so IF goes to its false branch: the work is the same either way.
 */
function handBuiltWorkflow(signingSecret: string): WorkflowToImport {
	const header = (name: string) => `$('Webhook').item.json.headers['${name}']`;
	return {
		id: 'benchHandBuilt01',
		name: 'Bench: Webhook + Extract From File + Crypto + IF',
		nodes: [
			{
				id: '9a8b7c6d-0000-4000-8000-00000000b004',
				name: 'Webhook',
				type: 'n8n-nodes-base.webhook',
				typeVersion: 2,
				position: [0, 0],
				webhookId: '9a8b7c6d-0000-4000-8000-00000000a004',
				parameters: { httpMethod: 'POST', path: HAND_BUILT_PATH, responseMode: 'onReceived', options: { rawBody: true } },
			},
			{ id: '9a8b7c6d-0000-4000-8000-00000000b005', name: 'Raw Body', type: 'n8n-nodes-base.extractFromFile', typeVersion: 1, position: [200, 0], parameters: { operation: 'text', options: {} } },
			{
				id: '9a8b7c6d-0000-4000-8000-00000000b006',
				name: 'Signature',
				type: 'n8n-nodes-base.crypto',
				typeVersion: 1,
				position: [400, 0],
				parameters: { action: 'hmac', type: 'SHA256', value: `={{ ${header('webhook-id')} }}.{{ ${header('webhook-timestamp')} }}.{{ $json.data }}`, dataPropertyName: 'signature', secret: signingSecret, encoding: 'base64' },
			},
			{
				id: '9a8b7c6d-0000-4000-8000-00000000b007',
				name: 'Signed?',
				type: 'n8n-nodes-base.if',
				typeVersion: 2,
				position: [600, 0],
				parameters: {
					conditions: {
						options: { caseSensitive: true, leftValue: '', typeValidation: 'loose' },
						conditions: [{ id: 'signed', leftValue: `={{ 'v1,' + $json.signature }}`, rightValue: `={{ ${header('webhook-signature')} }}`, operator: { type: 'string', operation: 'equals' } }],
						combinator: 'and',
					},
					options: {},
				},
			},
		],
		connections: {
			Webhook: { main: [[{ node: 'Raw Body', type: 'main', index: 0 }]] },
			'Raw Body': { main: [[{ node: 'Signature', type: 'main', index: 0 }]] },
			Signature: { main: [[{ node: 'Signed?', type: 'main', index: 0 }]] },
		},
		settings: { executionOrder: 'v1' },
	};
}

/** n8n's hash of a store entry (md5, base64), as its deduplication helper keeps them. */
const storeHash = () => randomBytes(16).toString('base64');

/** Fills each receiver's store row in n8n's SQLite database (n8n stopped), with Node 24's built-in SQLite. */
async function fillStoreRows(userFolder: string, receivers: Receiver[]): Promise<void> {
	const rows = receivers
		.filter((receiver) => receiver.storeEntries)
		.map((receiver) => ({
			workflowId: receiver.workflow.id,
			context: `n:${(receiver.workflow.nodes[0] as { id: string }).id}`,
			value: JSON.stringify({ mode: 'entries', data: Array.from({ length: receiver.storeEntries! }, storeHash) }),
		}));
	const script = `
		const { DatabaseSync } = require('node:sqlite');
		const db = new DatabaseSync(process.argv[1]);
		const insert = db.prepare("INSERT INTO processed_data (workflowId, context, value, createdAt, updatedAt) VALUES (?, ?, ?, STRFTIME('%Y-%m-%d %H:%M:%f', 'NOW'), STRFTIME('%Y-%m-%d %H:%M:%f', 'NOW'))");
		for (const row of JSON.parse(require('node:fs').readFileSync(process.argv[2], 'utf8'))) insert.run(row.workflowId, row.context, row.value);
		db.close();`;
	const rowsFile = path.join(userFolder, 'bench-store-rows.json');
	await fs.writeFile(rowsFile, JSON.stringify(rows));
	const runtime = await ensureN8n(n8nVersion);
	await captureOutput(runtime.nodeBinary, ['--no-warnings', '-e', script, path.join(userFolder, '.n8n', 'database.sqlite'), rowsFile], userFolder, runtime.env);
	await fs.rm(rowsFile);
}

function deliveries(url: string, secret: string, count: number): PreparedRequest[] {
	return Array.from({ length: count }, () => signedDelivery(url, secret, EVENT_TYPE, EVENT_DATA));
}

interface Figures {
	answered: number;
	answeredMs: number;
	processedMs: number;
	cpuMs: number;
	underLoad: number[];
	alone: number[];
	/** Sending to answer (ms): medians of each round under load, and each delivery alone. */
	answerUnderLoad: number[];
	answerAlone: number[];
}

/** One round of load at one receiver: what n8n answered, when its runs finished, what they cost. */
async function loadRound(n8n: RunningN8n, receiver: Receiver, secret: string, figures: Figures): Promise<string> {
	const before = await newestExecutionId(n8n, receiver.workflow.id);
	const cpuBefore = cpuMsOf(n8n.pid);
	const startedAt = Date.now();
	const result = await runLoad(deliveries(receiver.url!, secret, deliveriesPerRound), { concurrency, timeLimitMs: ROUND_TIME_LIMIT_MS });
	const runs = await finishedRunsAfter(n8n, receiver.workflow.id, before, result.ok, 300_000, 2_000);
	const lastStop = Math.max(...runs.map((run) => Date.parse(run.stoppedAt!)));
	figures.answered += result.ok;
	figures.answeredMs += result.elapsedMs;
	figures.processedMs += lastStop - startedAt;
	figures.cpuMs += cpuMsOf(n8n.pid) - cpuBefore;
	figures.underLoad.push(...runs.map(runDurationMs));
	figures.answerUnderLoad.push(result.latencyMs.p50);
	const failed = runs.filter((run) => run.status !== 'success').length;
	return `    ${receiver.label.padEnd(30)} answered ${result.perSecond.toFixed(1).padStart(5)}/s (median ${result.latencyMs.p50} ms, p95 ${result.latencyMs.p95} ms after sending), runs finished ${(result.ok / ((lastStop - startedAt) / 1000)).toFixed(1).padStart(5)}/s, median run ${median(runs.map(runDurationMs)).toFixed(0)} ms${failed ? `, ${failed} runs not successful` : ''}${result.ok < result.sent ? ` (${JSON.stringify(result.statuses)})` : ''}`;
}

/** One delivery at one receiver, then its run's duration once it finished. */
async function aloneRun(n8n: RunningN8n, receiver: Receiver, secret: string, figures: Figures): Promise<number> {
	// What n8n does after the previous run (its saves) is over by then.
	await new Promise((resolve) => setTimeout(resolve, 500));
	const before = await newestExecutionId(n8n, receiver.workflow.id);
	const result = await runLoad(deliveries(receiver.url!, secret, 1), { concurrency: 1, timeLimitMs: 30_000 });
	if (result.ok !== 1) throw new Error(`${receiver.label}: a delivery alone was answered ${JSON.stringify(result.statuses)}`);
	figures.answerAlone.push(result.latencyMs.p50);
	const [run] = await finishedRunsAfter(n8n, receiver.workflow.id, before, 1, 60_000, 50);
	return runDurationMs(run);
}

async function checkRemembered(url: string, secret: string, rememberedId: string): Promise<string> {
	const replay = signedDelivery(url, secret, EVENT_TYPE, EVENT_DATA, rememberedId);
	const response = await fetch(replay.url, { method: 'POST', headers: { 'content-type': 'application/json', ...replay.headers }, body: replay.body });
	const answer = await response.text();
	return response.ok && answer.includes('already') ? 'an id remembered from the day is recognised' : `a remembered id was NOT recognised (${response.status} ${answer})`;
}

async function measure(userFolder: string, receivers: Receiver[], secret: string, rememberedId: string): Promise<Map<Receiver, Figures>> {
	const n8n = await startN8n({ userFolder, env: extraN8nEnv });
	const figures = new Map(receivers.map((receiver) => [receiver, { answered: 0, answeredMs: 0, processedMs: 0, cpuMs: 0, underLoad: [], alone: [], answerUnderLoad: [], answerAlone: [] } as Figures]));
	try {
		const ours = receivers.filter((receiver) => receiver.kind === 'ours');
		const webhooks = await triggerWebhooks(n8n.url, ours.map((receiver) => receiver.workflow));
		ours.forEach((receiver, index) => (receiver.url = webhooks[index].productionUrl));
		// The reference trigger serves the same path under its own webhook id.
		const reference = receivers.find((receiver) => receiver.kind === 'reference');
		const webhookIdOf = (receiver: Receiver) => (receiver.workflow.nodes[0] as { webhookId: string }).webhookId;
		if (reference) reference.url = ours[0].url!.replace(webhookIdOf(ours[0]), webhookIdOf(reference));
		receivers.find((receiver) => receiver.kind === 'minimal')!.url = minimalTriggerUrl(n8n.url);
		receivers.find((receiver) => receiver.kind === 'handBuilt')!.url = `${n8n.url}/webhook/${HAND_BUILT_PATH}`;
		console.log(`  ${await checkRemembered(ours[0].url!, secret, rememberedId)}`);
		for (const receiver of receivers) {
			const warmUp = await runLoad(deliveries(receiver.url!, secret, WARM_UP_DELIVERIES), { concurrency, timeLimitMs: ROUND_TIME_LIMIT_MS });
			if (warmUp.ok !== warmUp.sent) throw new Error(`warm-up of ${receiver.label} failed: ${JSON.stringify(warmUp.statuses)}`);
		}
		console.log(`  runs alone (one delivery at a time, receivers in turn, ${aloneRuns} each)`);
		for (let run = 0; run < aloneRuns; run++) for (const receiver of receivers) figures.get(receiver)!.alone.push(await aloneRun(n8n, receiver, secret, figures.get(receiver)!));
		for (let round = 1; round <= rounds; round++) {
			console.log(`  round ${round} under load (${deliveriesPerRound} deliveries, ${concurrency} in flight):`);
			// Forwards, then backwards: a steady drift of the machine's speed affects all receivers alike.
			const order = round % 2 ? receivers : [...receivers].reverse();
			for (const receiver of order) console.log(await loadRound(n8n, receiver, secret, figures.get(receiver)!));
		}
		return figures;
	} finally {
		await n8n.stop();
	}
}

function table(figures: Map<Receiver, Figures>): string[] {
	const minimal = [...figures].find(([receiver]) => receiver.kind === 'minimal')![1];
	const processed = (of: Figures) => of.answered / (of.processedMs / 1000);
	const lines = ['  receiver                        answered/s  runs/s  n8n CPU ms/delivery  median run alone  median run under load  answer alone  answer under load'];
	for (const [receiver, of] of figures) {
		lines.push(
			`  ${receiver.label.padEnd(30)} ${(of.answered / (of.answeredMs / 1000)).toFixed(1).padStart(8)}  ${processed(of).toFixed(1).padStart(6)}  ${(of.cpuMs / of.answered).toFixed(1).padStart(19)}  ${median(of.alone).toFixed(0).padStart(13)} ms  ${median(of.underLoad).toFixed(0).padStart(18)} ms  ${median(of.answerAlone).toFixed(0).padStart(9)} ms  ${median(of.answerUnderLoad).toFixed(0).padStart(14)} ms`,
		);
	}
	const verdict = (met: boolean) => (met ? 'MET' : 'NOT MET');
	for (const [receiver, of] of figures) {
		if (receiver.kind !== 'ours' && receiver.kind !== 'reference') continue;
		const ratio = processed(of) / processed(minimal);
		const extraAlone = median(of.alone) - median(minimal.alone);
		const loadRatio = median(of.underLoad) / median(minimal.underLoad);
		lines.push(
			`  ${receiver.label}: runs/s ÷ minimal ${ratio.toFixed(2)} (≥ ${TARGETS.processedRatio}: ${verdict(ratio >= TARGETS.processedRatio)}); ` +
				`alone ${extraAlone >= 0 ? '+' : ''}${extraAlone.toFixed(0)} ms (≤ +${TARGETS.aloneExtraMs}: ${verdict(extraAlone <= TARGETS.aloneExtraMs)}); ` +
				`under load × ${loadRatio.toFixed(2)} (≤ ${TARGETS.underLoadRatio}: ${verdict(loadRatio <= TARGETS.underLoadRatio)}); CPU ÷ minimal ${(of.cpuMs / of.answered / (minimal.cpuMs / minimal.answered)).toFixed(2)}`,
		);
	}
	const handBuilt = [...figures].find(([receiver]) => receiver.kind === 'handBuilt')![1];
	lines.push(`  the hand-built flow ÷ minimal: runs/s ${(processed(handBuilt) / processed(minimal)).toFixed(2)}`);
	return lines;
}

async function main(): Promise<void> {
	console.log(`n8n webhook throughput: n8n ${n8nVersion}, ${rounds} rounds of ${deliveriesPerRound} deliveries per receiver at concurrency ${concurrency}, ${aloneRuns} runs alone each`);
	await Promise.all([buildPackage(() => undefined), ensureN8n(n8nVersion, (line) => console.log(line))]);
	const secret = `whsec_${randomBytes(24).toString('base64')}`;
	const workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'n8n-bench-'));
	const userFolder = path.join(workDir, 'user');
	const { log, ids } = oneDayOfDeliveries(deliveriesPerDay, Date.now());
	const staticData = staticDataWith(log.buckets);
	const busy = oneDayOfDeliveries(busyDay, Date.now());
	const receivers: Receiver[] = [
		{ label: 'ours, store empty', kind: 'ours', workflow: ourWorkflow('Empty', 1, staticData) },
		{ label: `ours, store half full`, kind: 'ours', workflow: ourWorkflow('Half', 2, staticData), storeEntries: STORE_ENTRIES / 2 },
		{ label: `ours, store full`, kind: 'ours', workflow: ourWorkflow('Full', 3, staticData), storeEntries: STORE_ENTRIES },
		{ label: `ours, full, 100,000 a day`, kind: 'ours', workflow: ourWorkflow('Busy', 4, staticDataWith(busy.log.buckets)), storeEntries: STORE_ENTRIES },
		...(REFERENCE_COMMIT ? [{ label: `${REFERENCE_COMMIT.slice(0, 7)}, store empty`, kind: 'reference' as const, workflow: withReferenceTrigger(ourWorkflow('Refer', 5, staticData)) }] : []),
		{ label: 'minimal community trigger', kind: 'minimal', workflow: MINIMAL_WORKFLOW },
		{ label: 'hand-built flow (4 nodes)', kind: 'handBuilt', workflow: handBuiltWorkflow(secret) },
	];
	let summary: string[] = [];
	// Publishing the trigger checks that the service answers (the runs do not call it).
	const sandbox = await startSandbox();
	try {
		await prepareUserFolder({ userFolder, packageDir: await writeMinimalTriggerPackage(workDir), n8nVersion });
		if (REFERENCE_COMMIT) await installReferencePackage(userFolder, REFERENCE_COMMIT, n8nVersion);
		const workflows = receivers.map((receiver) => receiver.workflow);
		await installIntoN8n({
			userFolder,
			n8nVersion,
			credentials: [{ ...SAMPLE_CREDENTIAL, data: { apiKey: sandbox.apiKey, baseUrl: sandbox.url, requestsPerMinute: 20, webhookSigningSecret: secret } }],
			workflows,
			publish: workflows.map((workflow) => workflow.id),
		});
		await fillStoreRows(userFolder, receivers);
		console.log(
			`ours: static data of ${log.count.toLocaleString('en-US')} ids (a day at ${deliveriesPerDay.toLocaleString('en-US')}: ${JSON.stringify(staticData).length.toLocaleString('en-US')} B; ` +
				`at ${busyDay.toLocaleString('en-US')}: ${busy.log.count.toLocaleString('en-US')} ids, ${JSON.stringify(staticDataWith(busy.log.buckets)).length.toLocaleString('en-US')} B), store rows of 0, ${STORE_ENTRIES / 2} and ${STORE_ENTRIES} entries`,
		);
		summary = table(await measure(userFolder, receivers, secret, ids[ids.length - 1] ?? serviceDeliveryId()));
	} finally {
		await sandbox.close();
		await fs.rm(workDir, { recursive: true, force: true });
		if (summary.length) console.log(`\nn8n webhook throughput, n8n ${n8nVersion}, default setup:\n${summary.join('\n')}`);
	}
}

main().catch((error) => {
	console.log(`n8n webhook throughput: not measured: ${error.stack ?? error.message}`);
});
