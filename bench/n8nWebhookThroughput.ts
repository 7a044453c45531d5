/**
 * Webhook deliveries per second into the Agency Inbox Trigger against two receivers in the same real
 * n8n, with the same signed payload and the same loopback load generator:
 * - the floor: a minimal community webhook trigger, generated at run time as its own package, that
 *   accepts any body without verifying it and starts a run. It pays what any community trigger pays
 *   in n8n (under 2.x defaults an expression isolate for the webhook phase, `webhookPhaseNeedsIsolate`
 *   in n8n's live-webhooks), so ours against it is the cost of our own work: verification, the
 *   delivery log, and the static-data save n8n makes after every run of ours;
 * - n8n's own Webhook node, which n8n spares the isolate.
 * Our trigger starts with the delivery log of a day at the service's traffic (BENCH_REMEMBERED_IDS),
 * so every save writes what it writes in production. Prints the ratios (targets >= 0.9). Never
 * fails: it prints what it measured or why it could not.
 *
 *   node --require ts-node/register/transpile-only bench/n8nWebhookThroughput.ts
 *
 * Environment: AGENCY_INBOX_N8N_VERSION, BENCH_DELIVERIES (per round, default 400),
 * BENCH_CONCURRENCY (default 16), BENCH_ROUNDS (default 2), BENCH_N8N_ENV (JSON of extra n8n
 * variables, e.g. '{"N8N_EXPRESSION_ENGINE_POOL_SIZE":"4"}', to see what a setting changes),
 * BENCH_REMEMBERED_IDS (ids accepted over the last 24 h when the bench starts, default 10000).
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NODE_TYPES, PACKAGE_NAME, SAMPLE_CREDENTIAL, buildPackage, installIntoN8n, triggerWebhooks } from '../scripts/n8n/agencyInbox';
import { webhookTriggerSource, writeCommunityPackage } from '../scripts/n8n/generatedPackage';
import { ensureN8n, prepareUserFolder, startN8n, type WorkflowToImport } from '../scripts/n8n/harness';
import { SELECTED_N8N_VERSION } from '../scripts/n8n/install';
import { runLoad, type LoadResult, type PreparedRequest } from '../scripts/n8n/loadGenerator';
import { signedDelivery } from '../scripts/n8n/signedWebhook';
import { TRIGGER_NODE_NAME, oneDayOfDeliveries, staticDataWith } from './deliveryMemory';

const TARGET_RATIO = 0.9;
const n8nVersion = SELECTED_N8N_VERSION;
const deliveriesPerRound = Number(process.env.BENCH_DELIVERIES || 400);
const concurrency = Number(process.env.BENCH_CONCURRENCY || 16);
const rounds = Number(process.env.BENCH_ROUNDS || 2);
const extraN8nEnv = JSON.parse(process.env.BENCH_N8N_ENV || '{}') as Record<string, string>;
const rememberedIds = Number(process.env.BENCH_REMEMBERED_IDS ?? 10_000);
const ROUND_TIME_LIMIT_MS = 60_000;
const WARM_UP_DELIVERIES = 50;
const N8N_WEBHOOK_PATH = 'bench-n8n-webhook';

/** The floor: a community package of its own, with a trigger that verifies nothing. */
const FLOOR_PACKAGE = 'n8n-nodes-bench-floor';
const FLOOR_WEBHOOK_ID = '9a8b7c6d-0000-4000-8000-00000000a003';
const FLOOR_PATH = 'delivery';
const FLOOR_TRIGGER = webhookTriggerSource({
	className: 'BenchFloorTrigger',
	name: 'benchFloorTrigger',
	displayName: 'Bench Floor Trigger',
	description: 'Starts the workflow with any POST body, verifying nothing',
	path: FLOOR_PATH,
	// As ours and the Webhook node in this bench: answered before the run.
	responseMode: 'onReceived',
});

/** The same event for every receiver: a chat message, as the service sends it. */
const EVENT_TYPE = 'chat.message.sent';
const EVENT_DATA = { proposal: { uid: 'prop-0001' }, message: { text: 'Could we schedule a call this week?' }, chat: { id: 'room-001' } };

/** The three workflows; ours starts with `remembered` in its static data, as n8n keeps it. */
function benchWorkflows(remembered: object): WorkflowToImport[] {
	return [
		{
			id: 'benchOurTrigger1',
			name: 'Bench: Agency Inbox Trigger',
			nodes: [
				{
					id: '9a8b7c6d-0000-4000-8000-00000000b001',
					name: TRIGGER_NODE_NAME,
					type: NODE_TYPES.trigger,
					typeVersion: 1,
					position: [0, 0],
					webhookId: '9a8b7c6d-0000-4000-8000-00000000a001',
					parameters: { events: [EVENT_TYPE], options: {} },
					credentials: { agencyInboxApi: { id: SAMPLE_CREDENTIAL.id, name: SAMPLE_CREDENTIAL.name } },
				},
			],
			connections: {},
			staticData: staticDataWith(remembered),
		},
		{
			id: 'benchN8nWebhook1',
			name: "Bench: n8n's Webhook node",
			nodes: [
				{
					id: '9a8b7c6d-0000-4000-8000-00000000b002',
					name: 'Webhook',
					type: 'n8n-nodes-base.webhook',
					typeVersion: 2,
					position: [0, 0],
					webhookId: '9a8b7c6d-0000-4000-8000-00000000a002',
					parameters: { httpMethod: 'POST', path: N8N_WEBHOOK_PATH, responseMode: 'onReceived', options: {} },
				},
			],
			connections: {},
		},
		{
			id: 'benchFloorTrig01',
			name: 'Bench: the floor (community trigger, no verification)',
			nodes: [
				{
					id: '9a8b7c6d-0000-4000-8000-00000000b003',
					name: 'Bench Floor Trigger',
					type: `${FLOOR_PACKAGE}.benchFloorTrigger`,
					typeVersion: 1,
					position: [0, 0],
					webhookId: FLOOR_WEBHOOK_ID,
					parameters: {},
				},
			],
			connections: {},
		},
	];
}

/** Distinct signed deliveries: the trigger answers a repeated delivery id without a run. */
function deliveries(url: string, secret: string, count: number): PreparedRequest[] {
	return Array.from({ length: count }, () => signedDelivery(url, secret, EVENT_TYPE, EVENT_DATA));
}

function describe(label: string, result: LoadResult): string {
	const statuses = Object.entries(result.statuses).map(([status, count]) => `${status}x${count}`).join(' ');
	return `    ${label.padEnd(32)} ${result.perSecond.toFixed(1).padStart(7)} deliveries/s  (${result.ok}/${result.sent} ok in ${result.elapsedMs} ms, p50 ${result.latencyMs.p50} ms, p95 ${result.latencyMs.p95} ms; ${statuses})`;
}

interface N8nSetting {
	label: string;
	env: Record<string, string>;
}

/**
 * n8n 2.x evaluates expressions in an isolate ('vm' engine, the default) and acquires one for the
 * webhook phase of every trigger except its own Webhook node; the legacy engine shows the two
 * receivers without that difference. n8n 1.x ignores the variable.
 */
const SETTINGS: N8nSetting[] = Object.keys(extraN8nEnv).length
	? [{ label: JSON.stringify(extraN8nEnv), env: extraN8nEnv }]
	: [
			{ label: "n8n's defaults", env: {} },
			{ label: 'N8N_EXPRESSION_ENGINE=legacy', env: { N8N_EXPRESSION_ENGINE: 'legacy' } },
		];

/** Whether our trigger knows a remembered id when it starts: the day's log reached its static data. */
async function checkRemembered(url: string, signingSecret: string, rememberedId: string | undefined): Promise<void> {
	if (!rememberedId) return;
	const replay = signedDelivery(url, signingSecret, EVENT_TYPE, EVENT_DATA, rememberedId);
	const response = await fetch(replay.url, { method: 'POST', headers: { 'content-type': 'application/json', ...replay.headers }, body: replay.body });
	const answer = await response.text();
	const known = response.ok && answer.includes('already accepted');
	console.log(`  a remembered id ${known ? 'is known' : `was NOT known (${response.status} ${answer}): ours ran with a smaller log`}`);
}

/** Deliveries per second of [our trigger, the floor, n8n's Webhook node] in one running n8n. */
async function measure(userFolder: string, workflows: WorkflowToImport[], signingSecret: string, rememberedId: string | undefined, setting: N8nSetting): Promise<number[]> {
	const n8n = await startN8n({ userFolder, env: setting.env });
	try {
		const [ourWebhook] = await triggerWebhooks(n8n.url, workflows);
		const receivers = [
			{ label: `${PACKAGE_NAME} trigger`, url: ourWebhook.productionUrl },
			{ label: 'the floor (no verification)', url: `${n8n.url}/webhook/${FLOOR_WEBHOOK_ID}/${FLOOR_PATH}` },
			{ label: "n8n's Webhook node", url: `${n8n.url}/webhook/${N8N_WEBHOOK_PATH}` },
		];
		await checkRemembered(ourWebhook.productionUrl, signingSecret, rememberedId);
		for (const receiver of receivers) {
			const warmUp = await runLoad(deliveries(receiver.url, signingSecret, WARM_UP_DELIVERIES), { concurrency, timeLimitMs: ROUND_TIME_LIMIT_MS });
			if (warmUp.ok !== warmUp.sent) throw new Error(`warm-up of ${receiver.label} failed: ${JSON.stringify(warmUp.statuses)}`);
		}
		const totals = receivers.map(() => ({ ok: 0, ms: 0 }));
		for (let round = 1; round <= rounds; round++) {
			console.log(`  round ${round}:`);
			// Forwards, then backwards: a steady drift of the machine's speed affects all receivers alike.
			const order = round % 2 ? receivers.map((_, index) => index) : receivers.map((_, index) => receivers.length - 1 - index);
			for (const index of order) {
				const result = await runLoad(deliveries(receivers[index].url, signingSecret, deliveriesPerRound), { concurrency, timeLimitMs: ROUND_TIME_LIMIT_MS });
				console.log(describe(receivers[index].label, result));
				totals[index].ok += result.ok;
				totals[index].ms += result.elapsedMs;
			}
		}
		return totals.map((total) => total.ok / (total.ms / 1000));
	} finally {
		await n8n.stop();
	}
}

async function main(): Promise<void> {
	console.log(`n8n webhook throughput: n8n ${n8nVersion}, ${deliveriesPerRound} deliveries x ${rounds} rounds per receiver, concurrency ${concurrency}`);
	await Promise.all([buildPackage(), ensureN8n(n8nVersion, (line) => console.log(line))]);

	const signingSecret = `whsec_${randomBytes(24).toString('base64')}`;
	const workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'n8n-bench-'));
	const userFolder = path.join(workDir, 'user');
	const { log, ids } = oneDayOfDeliveries(rememberedIds, Date.now());
	const workflows = benchWorkflows(log.buckets);
	const summary: string[] = [];
	try {
		// First, so the user folder is bound to this n8n version; ours joins it in nodes/package.json.
		const floorDir = path.join(workDir, FLOOR_PACKAGE);
		await writeCommunityPackage(floorDir, { name: FLOOR_PACKAGE, nodes: { BenchFloorTrigger: FLOOR_TRIGGER } });
		await prepareUserFolder({ userFolder, packageDir: floorDir, n8nVersion });
		await installIntoN8n({
			userFolder,
			n8nVersion,
			credentials: [
				{
					...SAMPLE_CREDENTIAL,
					// Activation checks the service only when a person activates; nothing is called here.
					data: { apiKey: 'bench-key', baseUrl: 'http://127.0.0.1:9/service', requestsPerMinute: 20, webhookSigningSecret: signingSecret },
				},
			],
			workflows,
			publish: workflows.map((workflow) => workflow.id),
		});
		const installed = JSON.parse(await fs.readFile(path.join(userFolder, '.n8n', 'nodes', 'package.json'), 'utf8')) as { dependencies: object };
		console.log(`community packages in the user folder: ${Object.keys(installed.dependencies).join(', ')}`);
		console.log(`ours starts with ${ids.length.toLocaleString('en-US')} ids of the last 24 h in its static data (${JSON.stringify(log.buckets).length.toLocaleString('en-US')} B)`);
		for (const setting of SETTINGS) {
			console.log(`${setting.label}:`);
			const [ours, floor, webhookNode] = await measure(userFolder, workflows, signingSecret, ids[0], setting);
			const verdict = (ratio: number) => `${ratio.toFixed(2)} (target >= ${TARGET_RATIO}) ${ratio >= TARGET_RATIO ? 'MET' : 'NOT MET'}`;
			summary.push(
				`  ${setting.label}: ours ${ours.toFixed(1)}/s, the floor ${floor.toFixed(1)}/s, n8n's Webhook node ${webhookNode.toFixed(1)}/s`,
				`    ours / the floor:              ${verdict(ours / floor)}`,
				`    ours / n8n's Webhook node:     ${verdict(ours / webhookNode)}`,
				`    the floor / n8n's Webhook node: ${(floor / webhookNode).toFixed(2)} (what n8n charges any community trigger)`,
			);
		}
	} finally {
		await fs.rm(workDir, { recursive: true, force: true });
		if (summary.length) console.log(`
n8n webhook throughput, n8n ${n8nVersion}:
${summary.join('\n')}`);
	}
}

main().catch((error) => {
	console.log(`n8n webhook throughput: not measured: ${error.message}`);
});
