/**
 * Webhook deliveries per second into the Agency Inbox Trigger against n8n's own Webhook node, in
 * the same real n8n, with the same signed payload and the same loopback load generator.
 * Prints the ratio (target >= 0.9). Never fails: it prints what it measured or why it could not.
 *
 *   node --require ts-node/register/transpile-only bench/n8nWebhookThroughput.ts
 *
 * Environment: AGENCY_INBOX_N8N_VERSION, BENCH_DELIVERIES (per round, default 400),
 * BENCH_CONCURRENCY (default 16), BENCH_ROUNDS (default 2), BENCH_N8N_ENV (JSON of extra n8n
 * variables, e.g. '{"N8N_EXPRESSION_ENGINE_POOL_SIZE":"4"}', to see what a setting changes).
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NODE_TYPES, PACKAGE_NAME, SAMPLE_CREDENTIAL, buildPackage, installIntoN8n, triggerWebhooks } from '../scripts/n8n/agencyInbox';
import { ensureN8n, startN8n, type WorkflowToImport } from '../scripts/n8n/harness';
import { SELECTED_N8N_VERSION } from '../scripts/n8n/install';
import { runLoad, type LoadResult, type PreparedRequest } from '../scripts/n8n/loadGenerator';
import { signedDelivery } from '../scripts/n8n/signedWebhook';

const TARGET_RATIO = 0.9;
const n8nVersion = SELECTED_N8N_VERSION;
const deliveriesPerRound = Number(process.env.BENCH_DELIVERIES || 400);
const concurrency = Number(process.env.BENCH_CONCURRENCY || 16);
const rounds = Number(process.env.BENCH_ROUNDS || 2);
const extraN8nEnv = JSON.parse(process.env.BENCH_N8N_ENV || '{}') as Record<string, string>;
const ROUND_TIME_LIMIT_MS = 60_000;
const WARM_UP_DELIVERIES = 50;
const N8N_WEBHOOK_PATH = 'bench-n8n-webhook';

/** The same event for both receivers: a chat message, as the service sends it. */
const EVENT_TYPE = 'chat.message.sent';
const EVENT_DATA = { proposal: { uid: 'prop-0001' }, message: { text: 'Could we schedule a call this week?' }, chat: { id: 'room-001' } };

function benchWorkflows(): WorkflowToImport[] {
	return [
		{
			id: 'benchOurTrigger1',
			name: 'Bench: Agency Inbox Trigger',
			nodes: [
				{
					id: '9a8b7c6d-0000-4000-8000-00000000b001',
					name: 'Agency Inbox Trigger',
					type: NODE_TYPES.trigger,
					typeVersion: 1,
					position: [0, 0],
					webhookId: '9a8b7c6d-0000-4000-8000-00000000a001',
					parameters: { events: [EVENT_TYPE], options: {} },
					credentials: { agencyInboxApi: { id: SAMPLE_CREDENTIAL.id, name: SAMPLE_CREDENTIAL.name } },
				},
			],
			connections: {},
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

/** Deliveries per second of [our trigger, n8n's Webhook node] in one running n8n. */
async function measure(userFolder: string, workflows: WorkflowToImport[], signingSecret: string, setting: N8nSetting): Promise<[number, number]> {
	const n8n = await startN8n({ userFolder, env: setting.env });
	try {
		const [ourWebhook] = await triggerWebhooks(n8n.url, workflows);
		const receivers = [
			{ label: `${PACKAGE_NAME} trigger`, url: ourWebhook.productionUrl },
			{ label: "n8n's Webhook node", url: `${n8n.url}/webhook/${N8N_WEBHOOK_PATH}` },
		];
		for (const receiver of receivers) {
			const warmUp = await runLoad(deliveries(receiver.url, signingSecret, WARM_UP_DELIVERIES), { concurrency, timeLimitMs: ROUND_TIME_LIMIT_MS });
			if (warmUp.ok !== warmUp.sent) throw new Error(`warm-up of ${receiver.label} failed: ${JSON.stringify(warmUp.statuses)}`);
		}
		const totals = receivers.map(() => ({ ok: 0, ms: 0 }));
		for (let round = 1; round <= rounds; round++) {
			console.log(`  round ${round}:`);
			// Alternating receivers, so a drift of the machine's speed affects both alike.
			const order = round % 2 ? [0, 1] : [1, 0];
			for (const index of order) {
				const result = await runLoad(deliveries(receivers[index].url, signingSecret, deliveriesPerRound), { concurrency, timeLimitMs: ROUND_TIME_LIMIT_MS });
				console.log(describe(receivers[index].label, result));
				totals[index].ok += result.ok;
				totals[index].ms += result.elapsedMs;
			}
		}
		const [ours, theirs] = totals.map((total) => total.ok / (total.ms / 1000));
		return [ours, theirs];
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
	const workflows = benchWorkflows();
	const summary: string[] = [];
	try {
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
		for (const setting of SETTINGS) {
			console.log(`${setting.label}:`);
			const [ours, theirs] = await measure(userFolder, workflows, signingSecret, setting);
			const ratio = ours / theirs;
			summary.push(
				`  ${setting.label.padEnd(30)} ours ${ours.toFixed(1)}/s vs n8n's Webhook node ${theirs.toFixed(1)}/s: ratio ${ratio.toFixed(2)} (target >= ${TARGET_RATIO}) ${ratio >= TARGET_RATIO ? 'MET' : 'NOT MET'}`,
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
