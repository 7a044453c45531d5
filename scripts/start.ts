/**
 * `npm start`: the package working inside a real n8n, with one command.
 *
 * Builds the package, starts the sandbox (the service's local twin), installs a pinned n8n on first
 * use, installs this package into it as a community package, imports a credential and the sample
 * workflows of `workflows/`, publishes them but for the reply samples other than the webhook
 * auto-reply (each reply sample answers every client message: one published, one reply), starts
 * n8n, points the sandbox's webhooks at the production URLs of the published workflows and only then
 * starts the sandbox's activity simulator. Ctrl-C stops everything.
 *
 * `npm start -- --queue` (or AGENCY_INBOX_QUEUE=1) runs the same in n8n's queue mode, as
 * `npm run test:queue` does: a throwaway Postgres and Redis, a main (the editor, the polls), two
 * workers (the runs) and a webhook process (the sandbox's webhooks), all in a temp dir removed on stop.
 *
 * Environment: AGENCY_INBOX_N8N_VERSION (default the pinned 2.x), AGENCY_INBOX_N8N_PORT (5678),
 * AGENCY_INBOX_SANDBOX_PORT (5680), AGENCY_INBOX_N8N_WEBHOOK_PORT (queue mode's webhook process,
 * 5681), AGENCY_INBOX_N8N_CACHE (install and user folder location). The AI sample needs a chat
 * model: it is imported and published only with AGENCY_INBOX_OPENAI_API_KEY (and optionally
 * AGENCY_INBOX_OPENAI_BASE_URL, AGENCY_INBOX_OPENAI_MODEL for another OpenAI-compatible server).
 */
import path from 'node:path';
import { startSandbox } from '../sandbox';
import { FIRST_ROUND } from '../sandbox/simulator';
import {
	SAMPLE_SANDBOX_PORT,
	buildPackage,
	demoChatModel,
	demoPublishedSamples,
	installIntoN8n,
	loadSampleWorkflows,
	pollEverySeconds,
	registerWebhookEndpoints,
	sandboxCredential,
	triggerWebhooks,
	usesPollingTrigger,
	type TriggerWebhook,
} from './n8n/agencyInbox';
import { N8N_DEFAULT_EXPRESSION_ISOLATES, ensureN8n, publishedWorkflowIds, startN8n, type CredentialToImport, type RunningN8n, type WorkflowToImport } from './n8n/harness';
import { SELECTED_N8N_VERSION, n8nCacheRoot, readInstallation } from './n8n/install';
import { missingQueuePackages, runsAsRoot, startQueueTopology, type QueueProcess } from './n8n/queue';
import { stopOnExit } from './stopOnExit';
import { makeTempDir } from './tempDirs';

const n8nVersion = SELECTED_N8N_VERSION;
const queueMode = process.argv.includes('--queue') || process.env.AGENCY_INBOX_QUEUE === '1';
const n8nPort = Number(process.env.AGENCY_INBOX_N8N_PORT || 5678);
/** Queue mode's webhook process. Not 5679: n8n's default task broker port, taken by any other n8n here. */
const webhookPort = Number(process.env.AGENCY_INBOX_N8N_WEBHOOK_PORT || 5681);
const sandboxPort = Number(process.env.AGENCY_INBOX_SANDBOX_PORT || SAMPLE_SANDBOX_PORT);
/** One n8n database per n8n version (a 2.x database cannot be opened by 1.x), kept between starts. */
const userFolder = path.join(n8nCacheRoot(), `demo-user-${n8nVersion}`);
/** The polling triggers poll every 15 s here, so changes show up while people watch. */
const DEMO_POLL_TIMES = pollEverySeconds(15);
const SIMULATOR_INTERVAL_MS = 8_000;
/** The service raises the 20 per minute for trusted clients; the demo's sample workflows share one key. */
const DEMO_REQUESTS_PER_MINUTE = 60;
/** n8n's defaults, as users run it, in UTC. */
const DEMO_N8N_ENV = { GENERIC_TIMEZONE: 'UTC', ...N8N_DEFAULT_EXPRESSION_ISOLATES };
const QUEUE_WORKERS = 2;

const say = (line: string) => console.log(`[start] ${line}`);
const shutdown = stopOnExit(say);

/** The n8n processes people reach, and what the guide says about them. */
interface RunningN8nSetup {
	editor: RunningN8n;
	/** Where production webhooks are served: the editor's n8n, or queue mode's webhook process. */
	webhookOrigin: string;
	/** Per process: where it is, what it does, its log. */
	processes: string[];
	/** What else to know about this setup, under the processes. */
	notes: string[];
}

async function main(): Promise<void> {
	const startedAt = Date.now();
	if (queueMode) exitUnlessQueueServicesInstalled();
	if (!readInstallation(n8nVersion)) {
		say(`first start: installing n8n ${n8nVersion} into ${n8nCacheRoot()} (several minutes, once per machine)`);
	}
	// The build and the n8n install are independent; the install is the long one on a first start.
	const [buildMs] = await Promise.all([buildPackage(say), ensureN8n(n8nVersion, (line) => say(line))]);
	say(`package built in ${(buildMs / 1000).toFixed(1)} s`);

	const sandbox = await startSandbox({ port: sandboxPort, requestsPerMinute: DEMO_REQUESTS_PER_MINUTE });
	shutdown.add(() => sandbox.close());
	say(`sandbox at ${sandbox.origin} (its activity simulator starts once n8n is ready)`);

	const chatModel = demoChatModel(process.env);
	const workflows = await loadSampleWorkflows({
		sandboxOrigin: sandbox.origin,
		pollTimes: DEMO_POLL_TIMES,
		withChatModel: chatModel !== undefined,
		chatModelName: chatModel?.modelName,
	});
	if (!chatModel) say('AI sample left out: it needs a chat model (set AGENCY_INBOX_OPENAI_API_KEY, see the README)');
	const sandboxKey = sandboxCredential(sandbox, DEMO_REQUESTS_PER_MINUTE);
	// In queue mode the workers run the action nodes and the main polls, all with one key: each keeps to its share.
	const credentials = [
		queueMode ? { ...sandboxKey, data: { ...sandboxKey.data, processesSharingKey: QUEUE_WORKERS + 1 } } : sandboxKey,
		...(chatModel ? [chatModel.credential] : []),
	];
	const publish = demoPublishedSamples(workflows).map((workflow) => workflow.id);
	const setup = queueMode ? await startQueueMode(credentials, workflows, publish) : await startOneN8n(credentials, workflows, publish);

	// What n8n has published, not what was asked: a later start keeps what its user switched in the editor.
	const publishedIds = await publishedWorkflowIds(setup.editor);
	const samples = {
		published: workflows.filter((workflow) => publishedIds.includes(workflow.id)),
		unpublished: workflows.filter((workflow) => !publishedIds.includes(workflow.id)),
	};
	const webhooks = await triggerWebhooks(setup.webhookOrigin, samples.published);
	await registerWebhookEndpoints(sandbox.origin, webhooks.map((webhook) => webhook.productionUrl));
	const laterWebhooks = await triggerWebhooks(setup.webhookOrigin, samples.unpublished);
	printGuide(setup, sandbox.origin, samples, webhooks, laterWebhooks, Date.now() - startedAt);
	// Not earlier: a change is delivered only to the endpoints registered when it happens (as by the
	// service), so the first changes, one of each kind, would start no sample workflow.
	sandbox.startSimulator(SIMULATOR_INTERVAL_MS);
}

function exitUnlessQueueServicesInstalled(): void {
	const missing = missingQueuePackages();
	if (missing.length === 0) return;
	console.error(`[start] queue mode runs Postgres and Redis from Debian's packages; missing: ${missing.join(', ')}. Install with:`);
	console.error(`  ${runsAsRoot() ? '' : 'sudo '}apt-get install -y --no-install-recommends ${missing.join(' ')}`);
	process.exit(1);
}

/** One n8n on SQLite in the cache's demo user folder, kept between starts: the editor, webhooks, polls and runs. */
async function startOneN8n(credentials: CredentialToImport[], workflows: WorkflowToImport[], publish: string[]): Promise<RunningN8nSetup> {
	await installIntoN8n({ userFolder, n8nVersion, credentials, workflows, publish, log: say });
	say(`starting n8n ${n8nVersion} on port ${n8nPort}`);
	const n8n = await shutdown.whenStarted(startN8n({ userFolder, port: n8nPort, env: DEMO_N8N_ENV }), (started) => started.stop());
	return {
		editor: n8n,
		webhookOrigin: n8n.url,
		processes: describeProcess('n8n', n8n.url, 'editor, webhooks, polls and runs', n8n.logFile),
		notes: [],
	};
}

/** n8n's queue mode, started as `npm run test:queue` starts it; its database is thrown away on stop. */
async function startQueueMode(credentials: CredentialToImport[], workflows: WorkflowToImport[], publish: string[]): Promise<RunningN8nSetup> {
	const workDir = makeTempDir('start-queue');
	say(`queue mode: Postgres, Redis and n8n ${n8nVersion} (a main, ${QUEUE_WORKERS} workers, a webhook process) in ${workDir}`);
	const topology = await shutdown.whenStarted(
		startQueueTopology({
			workDir,
			n8nVersion,
			credentials,
			workflows,
			publish,
			workers: QUEUE_WORKERS,
			mainPort: n8nPort,
			webhookPorts: [webhookPort],
			env: DEMO_N8N_ENV,
			log: say,
		}),
		(started) => started.stop(),
	);
	const { main, workers, webhookProcesses, infrastructure } = topology;
	const describe = (queueProcess: QueueProcess, role: string) => describeProcess(queueProcess.name, queueProcess.current.url, role, queueProcess.current.logFile);
	return {
		editor: main.current,
		webhookOrigin: webhookProcesses[0].current.url,
		processes: [
			...describe(main, 'editor, REST API, polls of the polling triggers; queues the runs'),
			...workers.flatMap((worker) => describe(worker, 'runs executions from the queue (serves /healthz only)')),
			...webhookProcesses.flatMap((webhookProcess) => describe(webhookProcess, 'production webhooks; queues a run per delivery')),
			...describeProcess('Postgres', `127.0.0.1:${infrastructure.postgres.port}`, "n8n's database", path.join(workDir, 'postgres', 'postgres.log')),
			...describeProcess('Redis', `127.0.0.1:${infrastructure.redis.port}`, 'the queue', '(none)'),
		],
		notes: [
			`Which worker ran an execution: grep "Worker started execution" ${path.join(topology.userFolder, 'worker-*.log')}`,
			`The editor shows production URLs on the main's port; in queue mode only the webhook process serves them.`,
			`Everything is in ${workDir}, removed on stop.`,
		],
	};
}

function describeProcess(name: string, where: string, role: string, logFile: string): string[] {
	return [`${name.padEnd(10)} ${where.padEnd(24)} ${role}`, `${' '.repeat(11)}log: ${logFile}`];
}

interface SampleSets {
	published: WorkflowToImport[];
	unpublished: WorkflowToImport[];
}

function printGuide(setup: RunningN8nSetup, sandboxOrigin: string, samples: SampleSets, webhooks: TriggerWebhook[], laterWebhooks: TriggerWebhook[], elapsedMs: number): void {
	const { editor } = setup;
	const describeSample = (workflow: WorkflowToImport) => `  - ${workflow.name}${usesPollingTrigger(workflow) ? ' (polls every 15 s)' : ''}`;
	const lines = [
		'',
		`Ready in ${(elapsedMs / 1000).toFixed(1)} s.`,
		'',
		`  n8n editor:   ${editor.url}`,
		`  log in as:    ${editor.owner.email} / ${editor.owner.password}`,
		`  sandbox:      ${sandboxOrigin} (API at ${sandboxOrigin}/service)`,
		'',
		`Processes${queueMode ? ' (queue mode)' : ''}:`,
		...setup.processes.map((line) => `  ${line}`),
		...setup.notes.map((note) => `  ${note}`),
		'',
		'Published sample workflows (Overview -> Workflows; each run shows under Executions):',
		...samples.published.map(describeSample),
		...(samples.unpublished.length > 0 ? ['', 'Imported, not published:', ...samples.unpublished.map(describeSample)] : []),
		'',
		'The reply samples each answer every client message, so one is published: one reply per message.',
		'To try another, open the published one in the editor and click Unpublish, then open the other and click',
		'Publish (n8n 1.x: the Active toggle); the polling one answers at its next poll.',
		...laterWebhooks.flatMap((webhook) => [
			`Once "${webhook.workflowName}" is published, register its webhook with the sandbox:`,
			`  curl -X POST ${sandboxOrigin}/_sandbox/webhook-endpoints -H 'content-type: application/json' -d '{"url":"${webhook.productionUrl}"}'`,
		]),
		'',
		'Webhooks registered with the sandbox (signed, into the production URLs):',
		...webhooks.map((webhook) => `  - ${webhook.workflowName}: ${webhook.productionUrl}`),
		'',
		`The sandbox's activity simulator starts now: one change every ${SIMULATOR_INTERVAL_MS / 1000} s, the first ${FIRST_ROUND.length} one of each kind.`,
		'What to look at while it makes changes:',
		`  - ${sandboxOrigin}/_sandbox/crm           proposals the CRM workflow posted`,
		`  - ${sandboxOrigin}/_sandbox/messages      auto-replies sent through Send Message`,
		`  - ${sandboxOrigin}/_sandbox/bid-intents   scheduled bids the rule cancelled`,
		`  - ${sandboxOrigin}/_sandbox/deliveries    webhook deliveries and n8n's answers`,
		`  - ${sandboxOrigin}/_sandbox/simulator     the simulator's latest changes (kind, what it touched, when)`,
		'',
		'Press Ctrl-C to stop everything.',
		'',
	];
	console.log(lines.join('\n'));
}

main().catch((error) => {
	console.error(`[start] failed: ${error.stack ?? error.message}`);
	void shutdown.exit(1);
});
