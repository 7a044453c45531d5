/**
 * `npm start`: the package working inside a real n8n, with one command.
 *
 * Builds the package, starts the sandbox (the service's local twin) with its activity simulator,
 * installs a pinned n8n on first use, installs this package into it as a community package,
 * imports a credential and the sample workflows of `workflows/`, publishes them, starts n8n and
 * points the sandbox's webhooks at n8n's production URLs. Ctrl-C stops everything.
 *
 * Environment: AGENCY_INBOX_N8N_VERSION (default the pinned 2.x), AGENCY_INBOX_N8N_PORT (5678),
 * AGENCY_INBOX_SANDBOX_PORT (5680), AGENCY_INBOX_N8N_CACHE (install and user folder location).
 */
import path from 'node:path';
import { startSandbox } from '../sandbox';
import {
	NODE_TYPES,
	SAMPLE_SANDBOX_PORT,
	buildPackage,
	installIntoN8n,
	loadSampleWorkflows,
	pollEverySeconds,
	registerWebhookEndpoints,
	sandboxCredential,
	triggerWebhooks,
	type WorkflowNode,
} from './n8n/agencyInbox';
import { ensureN8n, startN8n, type RunningN8n } from './n8n/harness';
import { SELECTED_N8N_VERSION, n8nCacheRoot, readInstallation } from './n8n/install';

const n8nVersion = SELECTED_N8N_VERSION;
const n8nPort = Number(process.env.AGENCY_INBOX_N8N_PORT || 5678);
const sandboxPort = Number(process.env.AGENCY_INBOX_SANDBOX_PORT || SAMPLE_SANDBOX_PORT);
/** One n8n database per n8n version (a 2.x database cannot be opened by 1.x), kept between starts. */
const userFolder = path.join(n8nCacheRoot(), `demo-user-${n8nVersion}`);
/** The proposal trigger polls every 15 s here, so changes show up while people watch. */
const DEMO_POLL_TIMES = pollEverySeconds(15);
const SIMULATOR_INTERVAL_MS = 8_000;
/** The service raises the 20 per minute for trusted clients; the demo's three workflows share one key. */
const DEMO_REQUESTS_PER_MINUTE = 60;

const say = (line: string) => console.log(`[start] ${line}`);

async function main(): Promise<void> {
	const startedAt = Date.now();
	const stoppers: Array<() => Promise<void>> = [];
	let stopping = false;
	const stopAll = async (exitCode: number) => {
		if (stopping) return;
		stopping = true;
		say('stopping n8n and the sandbox ...');
		for (const stop of stoppers.reverse()) await stop().catch((error) => console.error(error.message));
		say('stopped');
		process.exit(exitCode);
	};
	process.on('SIGINT', () => void stopAll(0));
	process.on('SIGTERM', () => void stopAll(0));

	if (!readInstallation(n8nVersion)) {
		say(`first start: installing n8n ${n8nVersion} into ${n8nCacheRoot()} (several minutes, once per machine)`);
	}
	// The build and the n8n install are independent; the install is the long one on a first start.
	const [buildMs] = await Promise.all([buildPackage(say), ensureN8n(n8nVersion, (line) => say(line))]);
	say(`package built in ${(buildMs / 1000).toFixed(1)} s`);

	const sandbox = await startSandbox({ port: sandboxPort, requestsPerMinute: DEMO_REQUESTS_PER_MINUTE, simulator: { intervalMs: SIMULATOR_INTERVAL_MS } });
	stoppers.push(() => sandbox.close());
	say(`sandbox at ${sandbox.origin} (activity simulator: one change every ${SIMULATOR_INTERVAL_MS / 1000} s)`);

	const workflows = await loadSampleWorkflows({ sandboxOrigin: sandbox.origin, pollTimes: DEMO_POLL_TIMES });
	await installIntoN8n({
		userFolder,
		n8nVersion,
		credentials: [sandboxCredential(sandbox, DEMO_REQUESTS_PER_MINUTE)],
		workflows,
		publish: workflows.map((workflow) => workflow.id),
		log: say,
	});

	say(`starting n8n ${n8nVersion} on port ${n8nPort} (log: ${path.join(userFolder, 'n8n.log')})`);
	const n8n: RunningN8n = await startN8n({ userFolder, port: n8nPort, env: { GENERIC_TIMEZONE: 'UTC' } });
	stoppers.push(() => n8n.stop());

	const webhooks = await triggerWebhooks(n8n.url, workflows);
	await registerWebhookEndpoints(sandbox.origin, webhooks.map((webhook) => webhook.productionUrl));
	printGuide(n8n, sandbox.origin, workflows, webhooks.map((webhook) => `${webhook.workflowName}: ${webhook.productionUrl}`), Date.now() - startedAt);
}

function printGuide(n8n: RunningN8n, sandboxOrigin: string, workflows: Array<{ id: string; name: string; nodes: object[] }>, webhookLines: string[], elapsedMs: number): void {
	const usesNode = (workflow: { nodes: object[] }, type: string) => (workflow.nodes as WorkflowNode[]).some((node) => node.type === type);
	const lines = [
		'',
		`Ready in ${(elapsedMs / 1000).toFixed(1)} s.`,
		'',
		`  n8n editor:   ${n8n.url}`,
		`  log in as:    ${n8n.owner.email} / ${n8n.owner.password}`,
		`  sandbox:      ${sandboxOrigin} (API at ${sandboxOrigin}/service)`,
		'',
		'Published sample workflows (Overview -> Workflows; each run shows under Executions):',
		...workflows.map((workflow) => `  - ${workflow.name}${usesNode(workflow, NODE_TYPES.proposalTrigger) ? ' (polls every 15 s)' : ''}`),
		'',
		'Webhooks registered with the sandbox (signed, into the production URLs):',
		...webhookLines.map((line) => `  - ${line}`),
		'',
		'What to look at while the simulator makes changes:',
		`  - ${sandboxOrigin}/_sandbox/crm           proposals the CRM workflow posted`,
		`  - ${sandboxOrigin}/_sandbox/messages      auto-replies sent through Send Message`,
		`  - ${sandboxOrigin}/_sandbox/bid-intents   scheduled bids the rule cancelled`,
		`  - ${sandboxOrigin}/_sandbox/deliveries    webhook deliveries and n8n's answers`,
		'',
		'Press Ctrl-C to stop n8n and the sandbox.',
		'',
	];
	console.log(lines.join('\n'));
}

main().catch((error) => {
	console.error(`[start] failed: ${error.stack ?? error.message}`);
	process.exit(1);
});
