/**
 * Return All in n8n's queue mode against one n8n process, with the service at 20 requests per minute
 * per key. Two runs at the same moment of "Webhook node → Agency Inbox Proposal Get Many, Return All"
 * (15 pages each), in (1) one regular n8n process and (2) queue mode with two workers running one
 * execution each, with the credential's Processes Sharing This Key at 1 and at 2: four setups, each
 * against its own sandbox. Prints per setup the wall time against the limiter's floor
 * ((ceil(P/20) − 1) minutes for the P pages answered), the 429s the service sent and the most
 * requests it saw in any rolling minute (429s included). About 9 minutes; never fails.
 *
 *   node --require ts-node/register/transpile-only bench/queueReturnAll.ts
 */
import path from 'node:path';
import { startSandbox, type Sandbox } from '../sandbox';
import { busiestMinute, type RequestLogEntry } from '../sandbox/core';
import { NODE_TYPES, buildPackage, installIntoN8n } from '../scripts/n8n/agencyInbox';
import { ensureN8n, startN8n, type CredentialToImport, type WorkflowToImport } from '../scripts/n8n/harness';
import { SELECTED_N8N_VERSION } from '../scripts/n8n/install';
import { executionsByWorker, startQueueTopology } from '../scripts/n8n/queue';
import { stopOnExit } from '../scripts/stopOnExit';
import { makeTempDir } from '../scripts/tempDirs';

const n8nVersion = SELECTED_N8N_VERSION;
const REQUESTS_PER_MINUTE = 20;
const RUNS_AT_ONCE = 2;
const WORKERS = ['worker-1', 'worker-2'];
const N8N_ENV = { GENERIC_TIMEZONE: 'UTC', N8N_LOG_LEVEL: 'info' };

const say = (line: string) => console.log(`  ${line}`);
const shutdown = stopOnExit(say);

/** One measured setup: its own sandbox, credential and workflow. */
interface Setup {
	label: string;
	processesSharingKey: number;
	sandbox: Sandbox;
	credential: CredentialToImport;
	workflow: WorkflowToImport;
}

interface Measured {
	setup: Setup;
	wallMs: number;
	floorMs: number;
	answered429: number;
	maxPerRollingMinute: number;
	/** What the runs answered: records each, or n8n's error. */
	runs: string[];
	workers?: string[];
}

async function createSetup(index: number, mode: string, processesSharingKey: number): Promise<Setup> {
	const sandbox = await startSandbox({ requestsPerMinute: REQUESTS_PER_MINUTE });
	shutdown.add(() => sandbox.close());
	const id = `benchQueueRA${String(index).padStart(4, '0')}`;
	const credential: CredentialToImport = {
		id: `benchQueueCred${String(index).padStart(2, '0')}`,
		name: `Bench: ${mode}, sharing ${processesSharingKey}`,
		type: 'agencyInboxApi',
		data: { apiKey: sandbox.apiKey, baseUrl: sandbox.url, requestsPerMinute: REQUESTS_PER_MINUTE, processesSharingKey },
	};
	const workflow: WorkflowToImport = {
		id,
		name: credential.name,
		nodes: [
			{
				id: `9b000000-0000-4000-8000-0000000000${index}1`,
				name: 'Webhook',
				type: 'n8n-nodes-base.webhook',
				typeVersion: 2,
				position: [0, 0],
				webhookId: `9b000000-0000-4000-8000-0000000000${index}2`,
				// The answer waits for the run, so the request's time is the run's.
				parameters: { httpMethod: 'POST', path: id, responseMode: 'lastNode', responseData: 'allEntries', options: {} },
			},
			{
				id: `9b000000-0000-4000-8000-0000000000${index}3`,
				name: 'Get All Proposals',
				type: NODE_TYPES.action,
				typeVersion: 1,
				position: [300, 0],
				parameters: { resource: 'proposal', operation: 'getAll', returnAll: true, filters: {}, simplify: true },
				credentials: { agencyInboxApi: { id: credential.id, name: credential.name } },
			},
		],
		connections: { Webhook: { main: [[{ node: 'Get All Proposals', type: 'main', index: 0 }]] } },
		settings: { executionOrder: 'v1' },
	};
	return { label: `${mode}, sharing ${processesSharingKey}`, processesSharingKey, sandbox, credential, workflow };
}

/** Starts the runs at the same moment through `webhookOrigin` and reads what the service saw. */
async function measure(setup: Setup, webhookOrigin: string): Promise<Measured> {
	const startedAt = Date.now();
	const runs = await Promise.all(
		Array.from({ length: RUNS_AT_ONCE }, async () => {
			const answer = await fetch(`${webhookOrigin}/webhook/${setup.workflow.id}`, { method: 'POST' });
			const text = await answer.text();
			return answer.ok ? `${(JSON.parse(text) as unknown[]).length} records` : `${answer.status} ${text.slice(0, 200)}`;
		}),
	);
	const wallMs = Date.now() - startedAt;
	say(`${setup.label}: ${(wallMs / 1000).toFixed(1)} s (${runs.join(', ')})`);
	const requests = ((await (await fetch(`${setup.sandbox.origin}/_sandbox/requests`)).json()) as { data: RequestLogEntry[] }).data;
	const pages = requests.filter((request) => request.status === 200).length;
	return {
		setup,
		wallMs,
		floorMs: (Math.ceil(pages / REQUESTS_PER_MINUTE) - 1) * 60_000,
		answered429: requests.filter((request) => request.status === 429).length,
		maxPerRollingMinute: busiestMinute(requests),
		runs,
	};
}

async function measureInOneProcess(setups: Setup[], results: Measured[]): Promise<void> {
	const userFolder = path.join(makeTempDir('bench-one-process'), 'n8n');
	await installIntoN8n({ userFolder, n8nVersion, credentials: setups.map((setup) => setup.credential), workflows: setups.map((setup) => setup.workflow), publish: setups.map((setup) => setup.workflow.id) });
	const n8n = await shutdown.whenStarted(startN8n({ userFolder, env: N8N_ENV }), (started) => started.stop());
	for (const setup of setups) results.push(await measure(setup, n8n.url));
	await n8n.stop();
}

async function measureInQueueMode(setups: Setup[], results: Measured[]): Promise<void> {
	const topology = await shutdown.whenStarted(
		startQueueTopology({
			// Itself the temp dir: startPostgres opens it to the Postgres user, not the folders above it.
			workDir: makeTempDir('bench-queue'),
			n8nVersion,
			credentials: setups.map((setup) => setup.credential),
			workflows: setups.map((setup) => setup.workflow),
			publish: setups.map((setup) => setup.workflow.id),
			// One execution at a time per worker, so the two runs go to both workers.
			workerConcurrency: 1,
			env: N8N_ENV,
			log: say,
		}),
		(started) => started.stop(),
	);
	for (const setup of setups) {
		const before = await executionsByWorker(topology.userFolder, WORKERS);
		const result = await measure(setup, topology.webhookProcesses[0].current.url);
		const after = await executionsByWorker(topology.userFolder, WORKERS);
		results.push({ ...result, workers: [...after].filter(([execution]) => !before.has(execution)).map(([, worker]) => worker) });
	}
	await topology.stop();
}

function printTable(results: Measured[]): void {
	const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
	const rows = [
		['setup', 'wall time', 'floor', 'ratio', '429s', 'max/rolling min', 'runs'],
		...results.map((result) => [
			result.setup.label,
			seconds(result.wallMs),
			seconds(result.floorMs),
			result.floorMs > 0 ? (result.wallMs / result.floorMs).toFixed(2) : 'n/a',
			String(result.answered429),
			String(result.maxPerRollingMinute),
			`${result.runs.join(', ')}${result.workers ? ` (on ${result.workers.join(', ')})` : ''}`,
		]),
	];
	const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
	console.log(`\nReturn All x${RUNS_AT_ONCE} at once, service at ${REQUESTS_PER_MINUTE} requests per minute, n8n ${n8nVersion}:`);
	for (const row of rows) console.log(`  ${row.map((cell, column) => cell.padEnd(widths[column])).join('  ')}`.trimEnd());
}

async function main(): Promise<void> {
	console.log(`Return All x${RUNS_AT_ONCE} at once in one n8n process and in queue mode (2 workers), n8n ${n8nVersion}, the service at ${REQUESTS_PER_MINUTE} per minute`);
	await Promise.all([buildPackage(say), ensureN8n(n8nVersion, say)]);
	const oneProcess = [await createSetup(1, 'one n8n process', 1), await createSetup(2, 'one n8n process', 2)];
	const queue = [await createSetup(3, 'queue mode, 2 workers', 1), await createSetup(4, 'queue mode, 2 workers', 2)];
	const results: Measured[] = [];
	try {
		await measureInOneProcess(oneProcess, results);
		await measureInQueueMode(queue, results);
	} finally {
		if (results.length) printTable(results);
	}
}

main()
	.catch((error) => console.log(`queue Return All: not measured: ${error.message}`))
	.then(() => shutdown.exit(0));
