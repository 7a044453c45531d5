/**
 * What the record of each delivery costs (the Agency Inbox Trigger's entries in n8n's deduplication
 * store, which every n8n process reads), beside the minimal community trigger (support/minimalTrigger.ts):
 * - queue mode (a main, 2 workers, a webhook process; Postgres and Redis), the two side by side: runs
 *   finished per second at BENCH_CONCURRENCY in flight, the n8n processes' CPU per delivery, and the
 *   median answer time (sending to n8n's answer) and run duration (n8n's start to stop), alone and under
 *   load. The default setup's figures are n8nWebhookThroughput.ts's.
 * - in both setups, the statements n8n sends to the store's table (`processed_data`) per delivery, read
 *   from n8n's own query log (DB_LOGGING_ENABLED): deliveries one at a time (sending to the run's end and
 *   a second after it), the re-delivery of each after its run, and in queue mode what the workers' holds
 *   cost afterwards (one renewal call every 5 s for all the deliveries a worker holds, 5 minutes after
 *   its last claim, then the held-through marks).
 * Ours is the trigger alone, its static data holding a day at 10,000 deliveries, as in
 * n8nWebhookThroughput.ts's "store empty". Prints the figures; never fails.
 *
 *   node --require ts-node/register/transpile-only bench/deliveryRecordCost.ts
 *
 * Environment: AGENCY_INBOX_N8N_VERSION, BENCH_SETUPS ("default,queue"), BENCH_DELIVERIES (per
 * receiver and round, default 150), BENCH_CONCURRENCY (8), BENCH_ROUNDS (2), BENCH_ALONE_RUNS (10),
 * BENCH_COUNTED (deliveries counted one at a time per receiver, 10).
 */
import path from 'node:path';

import { startSandbox, type Sandbox } from '../sandbox';
import { NODE_TYPES, SAMPLE_CREDENTIAL, buildPackage, installIntoN8n, sandboxCredential } from '../scripts/n8n/agencyInbox';
import { ensureN8n, prepareUserFolder, startN8n, type RunningN8n, type WorkflowToImport } from '../scripts/n8n/harness';
import { SELECTED_N8N_VERSION } from '../scripts/n8n/install';
import { runLoad, type PreparedRequest } from '../scripts/n8n/loadGenerator';
import { executionsByWorker, startQueueTopology, type QueueTopology } from '../scripts/n8n/queue';
import { signedDelivery } from '../scripts/n8n/signedWebhook';
import { makeTempDir, removeTempDir } from '../scripts/tempDirs';
import { TRIGGER_NODE_NAME, oneDayOfDeliveries, staticDataWith } from './deliveryMemory';
import { loadSettings } from './support/loadSettings';
import { MINIMAL_WORKFLOW, minimalTriggerUrl, writeMinimalTriggerPackage } from './support/minimalTrigger';
import { cpuMsOf, executionsAfter, finishedRunsAfter, median, newestExecutionId, runDurationMs } from './support/n8nRuns';

const n8nVersion = SELECTED_N8N_VERSION;
const setups = (process.env.BENCH_SETUPS || 'default,queue').split(',');
const { deliveriesPerRound, concurrency, rounds, aloneRuns } = loadSettings({ deliveriesPerRound: 150, aloneRuns: 10 });
const countedDeliveries = Number(process.env.BENCH_COUNTED || 10);
const ROUND_TIME_LIMIT_MS = 180_000;
const WARM_UP_DELIVERIES = 30;
/** A worker holds a delivery 5 minutes after its claim (deliveryLease.ts); the marks follow within seconds. */
const HOLD_MS = 5 * 60_000 + 30_000;
/** n8n's query log (TypeORM's): one `query: <SQL>` line per statement. */
const QUERY_LOG = { DB_LOGGING_ENABLED: 'true', DB_LOGGING_OPTIONS: 'query' };

const EVENT_TYPE = 'chat.message.sent';
const EVENT_DATA = { proposal: { uid: 'prop-0001' }, message: { text: 'Could we schedule a call this week?' }, chat: { id: 'room-001' } };
const OURS_WEBHOOK_ID = '9a8b7c6d-0000-4000-8000-00000000a0e1';

const oursWorkflow = (): WorkflowToImport => ({
	id: 'benchRecordCost1',
	name: 'Bench: Agency Inbox Trigger (the delivery record)',
	nodes: [
		{
			id: '9a8b7c6d-0000-4000-8000-00000000b0e1',
			name: TRIGGER_NODE_NAME,
			type: NODE_TYPES.trigger,
			typeVersion: 1,
			position: [0, 0],
			webhookId: OURS_WEBHOOK_ID,
			parameters: { events: [EVENT_TYPE], options: {} },
			credentials: { agencyInboxApi: { id: SAMPLE_CREDENTIAL.id, name: SAMPLE_CREDENTIAL.name } },
		},
	],
	connections: {},
	staticData: staticDataWith(oneDayOfDeliveries(10_000, Date.now()).log.buckets),
});

/** One receiver in one n8n: where deliveries go, and the n8n whose REST API lists its runs. */
interface Receiver {
	label: string;
	workflowId: string;
	url: string;
}

/** Where the receivers run: the n8n to read runs from and the processes whose CPU counts. */
interface Installation {
	rest: RunningN8n;
	pids(): number[];
	/** Queue mode: the worker that started each execution (from the workers' logs). */
	workerOf?(): Promise<Map<string, string>>;
}

/** Why a round did not finish: its unfinished runs by status, and in queue mode the worker that started each. */
async function unfinishedRuns(installation: Installation, receiver: Receiver, afterId: string): Promise<string> {
	const runs = await executionsAfter(installation.rest, receiver.workflowId, afterId);
	const unfinished = runs.filter((run) => !run.stoppedAt);
	const workers = (await installation.workerOf?.()) ?? new Map<string, string>();
	const described = unfinished.map((run) => `${run.id} ${run.status}${workers.has(run.id) ? ` on ${workers.get(run.id)}` : ' (no worker started it)'}`);
	return `${runs.length} runs recorded, ${unfinished.length} unfinished: ${described.join(', ')}`;
}

/** Counts n8n's statements on the store's table from its query log, while `counting` is on. */
class StoreStatements {
	counting = false;

	private counts: Record<string, number> = {};

	onLine = (line: string): void => {
		if (!this.counting) return;
		// eslint-disable-next-line no-control-regex
		const plain = line.replace(/\x1b\[[0-9;]*m/g, '');
		const statement = /query(?: failed)?:\s*(\w+)/i.exec(plain);
		if (!statement || !plain.includes('processed_data')) return;
		const verb = statement[1].toUpperCase();
		this.counts[verb] = (this.counts[verb] ?? 0) + 1;
	};

	/** The counts since the last take, by SQL verb. */
	take(): Record<string, number> {
		const counts = this.counts;
		this.counts = {};
		return counts;
	}
}

const total = (counts: Record<string, number>) => Object.values(counts).reduce((sum, count) => sum + count, 0);
const perDelivery = (counts: Record<string, number>, deliveries: number) =>
	`${(total(counts) / deliveries).toFixed(1)} (${Object.entries(counts).map(([verb, count]) => `${verb} ${(count / deliveries).toFixed(1)}`).join(', ') || 'none'})`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function deliveriesTo(receiver: Receiver, secret: string, count: number): PreparedRequest[] {
	return Array.from({ length: count }, () => signedDelivery(receiver.url, secret, EVENT_TYPE, EVENT_DATA));
}

/** Sends one request and waits for the run it starts to end; answers the time to n8n's answer and the run. */
async function oneAtATime(installation: Installation, receiver: Receiver, request: PreparedRequest): Promise<{ answerMs: number; runMs: number }> {
	const before = await newestExecutionId(installation.rest, receiver.workflowId);
	const result = await runLoad([request], { concurrency: 1, timeLimitMs: 60_000 });
	if (result.ok !== 1) throw new Error(`${receiver.label}: a delivery alone was answered ${JSON.stringify(result.statuses)}`);
	const [run] = await finishedRunsAfter(installation.rest, receiver.workflowId, before, 1, 120_000, 50);
	return { answerMs: result.latencyMs.p50, runMs: runDurationMs(run) };
}

/** The statements on the store per delivery, one at a time, then per re-delivery of each after its run. */
async function storeStatementsOf(installation: Installation, receiver: Receiver, secret: string, statements: StoreStatements): Promise<string> {
	const sent: PreparedRequest[] = [];
	const delivered: Record<string, number> = {};
	statements.counting = true;
	statements.take();
	for (let index = 0; index < countedDeliveries; index++) {
		const [request] = deliveriesTo(receiver, secret, 1);
		sent.push(request);
		await oneAtATime(installation, receiver, request);
		// What follows the answer (the end of a run marked in the store) is over by then.
		await sleep(1_000);
		for (const [verb, count] of Object.entries(statements.take())) delivered[verb] = (delivered[verb] ?? 0) + count;
	}
	const again: Record<string, number> = {};
	for (const request of sent) {
		const answer = await fetch(request.url, { method: 'POST', headers: { 'content-type': 'application/json', ...request.headers }, body: request.body });
		await answer.text();
		await sleep(1_000);
		for (const [verb, count] of Object.entries(statements.take())) again[verb] = (again[verb] ?? 0) + count;
	}
	statements.counting = false;
	return `    ${receiver.label}: ${perDelivery(delivered, countedDeliveries)} a delivery (one at a time), ${perDelivery(again, sent.length)} a re-delivery after its run`;
}

interface LoadFigures {
	answered: number;
	processedMs: number;
	cpuMs: number;
	runsUnderLoad: number[];
	answerUnderLoad: number[];
	runsAlone: number[];
	answerAlone: number[];
}

async function loadRound(installation: Installation, receiver: Receiver, secret: string, figures: LoadFigures): Promise<string> {
	const before = await newestExecutionId(installation.rest, receiver.workflowId);
	const cpuBefore = installation.pids().reduce((sum, pid) => sum + cpuMsOf(pid), 0);
	const startedAt = Date.now();
	const result = await runLoad(deliveriesTo(receiver, secret, deliveriesPerRound), { concurrency, timeLimitMs: ROUND_TIME_LIMIT_MS });
	const runs = await finishedRunsAfter(installation.rest, receiver.workflowId, before, result.ok, 300_000, 2_000).catch(async (error) => {
		throw new Error(`${error.message} (${JSON.stringify(result.statuses)} answered; ${await unfinishedRuns(installation, receiver, before)})`);
	});
	const lastStop = Math.max(...runs.map((run) => Date.parse(run.stoppedAt!)));
	figures.answered += result.ok;
	figures.processedMs += lastStop - startedAt;
	figures.cpuMs += installation.pids().reduce((sum, pid) => sum + cpuMsOf(pid), 0) - cpuBefore;
	figures.runsUnderLoad.push(...runs.map(runDurationMs));
	figures.answerUnderLoad.push(result.latencyMs.p50);
	const failed = runs.filter((run) => run.status !== 'success').length;
	return `    ${receiver.label.padEnd(28)} runs finished ${(result.ok / ((lastStop - startedAt) / 1000)).toFixed(1).padStart(5)}/s, answer median ${result.latencyMs.p50} ms${failed ? `, ${failed} runs not successful` : ''}${result.ok < result.sent ? ` (${JSON.stringify(result.statuses)})` : ''}`;
}

/** Throughput and run time of each receiver in one installation: warm-up, runs alone in turn, rounds under load. */
async function throughput(installation: Installation, receivers: Receiver[], secret: string): Promise<string[]> {
	const figures = new Map(receivers.map((receiver) => [receiver, { answered: 0, processedMs: 0, cpuMs: 0, runsUnderLoad: [], answerUnderLoad: [], runsAlone: [], answerAlone: [] } as LoadFigures]));
	for (const receiver of receivers) {
		const warmUp = await runLoad(deliveriesTo(receiver, secret, WARM_UP_DELIVERIES), { concurrency, timeLimitMs: ROUND_TIME_LIMIT_MS });
		if (warmUp.ok !== warmUp.sent) throw new Error(`warm-up of ${receiver.label} failed: ${JSON.stringify(warmUp.statuses)}`);
	}
	console.log(`  runs alone (one delivery at a time, receivers in turn, ${aloneRuns} each)`);
	for (let run = 0; run < aloneRuns; run++) {
		for (const receiver of receivers) {
			await sleep(500);
			const alone = await oneAtATime(installation, receiver, deliveriesTo(receiver, secret, 1)[0]);
			figures.get(receiver)!.runsAlone.push(alone.runMs);
			figures.get(receiver)!.answerAlone.push(alone.answerMs);
		}
	}
	for (let round = 1; round <= rounds; round++) {
		console.log(`  round ${round} under load (${deliveriesPerRound} deliveries, ${concurrency} in flight):`);
		const order = round % 2 ? receivers : [...receivers].reverse();
		for (const receiver of order) console.log(await loadRound(installation, receiver, secret, figures.get(receiver)!));
	}
	const [ours, minimal] = receivers.map((receiver) => figures.get(receiver)!);
	const runsPerSecond = (of: LoadFigures) => of.answered / (of.processedMs / 1000);
	const lines = ['    receiver                     runs/s  n8n CPU ms/delivery  run alone  run under load  answer alone  answer under load'];
	for (const [receiver, of] of figures) {
		lines.push(
			`    ${receiver.label.padEnd(28)} ${runsPerSecond(of).toFixed(1).padStart(6)}  ${(of.cpuMs / of.answered).toFixed(1).padStart(19)}  ${median(of.runsAlone).toFixed(0).padStart(6)} ms  ${median(of.runsUnderLoad).toFixed(0).padStart(11)} ms  ${median(of.answerAlone).toFixed(0).padStart(9)} ms  ${median(of.answerUnderLoad).toFixed(0).padStart(14)} ms`,
		);
	}
	lines.push(
		`    ours ÷ minimal: runs/s ${(runsPerSecond(ours) / runsPerSecond(minimal)).toFixed(2)}, CPU per delivery ${(ours.cpuMs / ours.answered / (minimal.cpuMs / minimal.answered)).toFixed(2)}, ` +
			`run alone +${(median(ours.runsAlone) - median(minimal.runsAlone)).toFixed(0)} ms, answer alone +${(median(ours.answerAlone) - median(minimal.answerAlone)).toFixed(0)} ms`,
	);
	return lines;
}

function receiversAt(origin: string): Receiver[] {
	return [
		{ label: 'ours', workflowId: oursWorkflow().id, url: `${origin}/webhook/${OURS_WEBHOOK_ID}/webhook` },
		{ label: 'minimal community trigger', workflowId: MINIMAL_WORKFLOW.id, url: minimalTriggerUrl(origin) },
	];
}

async function defaultSetup(sandbox: Sandbox, summary: string[]): Promise<void> {
	const workDir = makeTempDir('bench-record-cost');
	const userFolder = path.join(workDir, 'n8n');
	const statements = new StoreStatements();
	let n8n: RunningN8n | undefined;
	try {
		await prepareUserFolder({ userFolder, packageDir: await writeMinimalTriggerPackage(workDir), n8nVersion });
		const workflows = [oursWorkflow(), MINIMAL_WORKFLOW];
		await installIntoN8n({ userFolder, n8nVersion, credentials: [sandboxCredential(sandbox)], workflows, publish: workflows.map((workflow) => workflow.id) });
		n8n = await startN8n({ userFolder, env: QUERY_LOG, onOutput: statements.onLine });
		const running = n8n;
		const installation: Installation = { rest: running, pids: () => [running.pid] };
		summary.push("  n8n's default setup: statements on the store (processed_data) by n8n's query log");
		for (const receiver of receiversAt(n8n.url)) summary.push(await storeStatementsOf(installation, receiver, sandbox.signingSecret, statements));
	} finally {
		await n8n?.stop();
		removeTempDir(workDir);
	}
}

async function queueMode(sandbox: Sandbox, summary: string[]): Promise<void> {
	const workDir = makeTempDir('bench-record-cost-queue');
	const statements = new StoreStatements();
	let topology: QueueTopology | undefined;
	try {
		const workflows = [oursWorkflow(), MINIMAL_WORKFLOW];
		topology = await startQueueTopology({
			workDir,
			n8nVersion,
			credentials: [sandboxCredential(sandbox)],
			workflows,
			publish: workflows.map((workflow) => workflow.id),
			otherPackageDirs: [await writeMinimalTriggerPackage(workDir)],
			onOutput: (_name, line) => statements.onLine(line),
			log: (line) => console.log(`  ${line}`),
		});
		const running = topology;
		const processes = () => [running.main, ...running.workers, ...running.webhookProcesses];
		const installation: Installation = {
			rest: running.main.current,
			pids: () => processes().map((queueProcess) => queueProcess.current.pid),
			workerOf: () => executionsByWorker(running.userFolder, running.workers.map((worker) => worker.name)),
		};
		const receivers = receiversAt(running.webhookProcesses[0].current.url);
		summary.push('  queue mode (a main, 2 workers, a webhook process), throughput:', ...(await throughput(installation, receivers, sandbox.signingSecret)));
		// The processes that handle deliveries log their queries from now on (the rounds' holds end with the workers).
		console.log('  restarting the workers and the webhook process with the query log');
		await Promise.all([...running.workers, ...running.webhookProcesses].map((queueProcess) => queueProcess.restart(QUERY_LOG)));
		summary.push('  queue mode: statements on the store (processed_data) by n8n\'s query log');
		// The webhook process kept its port, so the receivers' URLs hold; the minimal trigger first, before ours holds anything.
		for (const receiver of [...receivers].reverse()) summary.push(await storeStatementsOf(installation, receiver, sandbox.signingSecret, statements));
		statements.counting = true;
		await sleep(HOLD_MS);
		statements.counting = false;
		const held = statements.take();
		summary.push(`    ours, the workers' holds of those ${countedDeliveries} deliveries afterwards (renewals every 5 s for 5 minutes, then the marks): ${total(held)} statements in all (${perDelivery(held, countedDeliveries)} a delivery)`);
	} finally {
		await topology?.stop();
		removeTempDir(workDir);
	}
}

async function main(): Promise<void> {
	console.log(`The delivery record's cost: n8n ${n8nVersion} (${setups.join(', ')}), ${rounds} rounds of ${deliveriesPerRound} at ${concurrency} in flight, ${aloneRuns} alone, ${countedDeliveries} counted`);
	await Promise.all([buildPackage(() => undefined), ensureN8n(n8nVersion, (line) => console.log(line))]);
	const summary: string[] = [];
	// Publishing the trigger checks that the service answers (the runs do not call it).
	const sandbox = await startSandbox();
	try {
		if (setups.includes('default')) await defaultSetup(sandbox, summary);
		if (setups.includes('queue')) await queueMode(sandbox, summary);
	} finally {
		await sandbox.close();
		if (summary.length) console.log(`\nThe delivery record's cost, n8n ${n8nVersion}:\n${summary.join('\n')}`);
	}
}

main().catch((error) => console.log(`The delivery record's cost: not measured: ${error.stack ?? error.message}`));
