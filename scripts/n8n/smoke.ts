/**
 * Proves the harness end to end with a throwaway community package generated at run time:
 * install n8n, load the package, run a workflow with `n8n execute`, then start n8n and call a
 * published webhook. Prints the timings.
 *
 *   node --require ts-node/register/transpile-only scripts/n8n/smoke.ts [n8nVersion] [--keep]
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
	ensureN8n,
	executeWorkflow,
	importCredentials,
	importWorkflows,
	nodeOutputJson,
	prepareUserFolder,
	publishWorkflow,
	startN8n,
} from './harness';
import { writeCommunityPackage, webhookTriggerSource } from './generatedPackage';
import { DEFAULT_N8N_VERSION } from './install';

const PROBE_PACKAGE = 'n8n-nodes-harness-probe';
const PROBE_NODE_TYPE = `${PROBE_PACKAGE}.harnessProbe`;
const PROBE_TOKEN = 'probe-secret-token';
const WEBHOOK_ID = '5b0c3a4e-8d1f-4c2a-9e6b-7f3d2a1c0b9e';

/** A programmatic node that tags each item with its greeting and its credential's token, in plain JS. */
const PROBE_NODE_SOURCE = `'use strict';
class HarnessProbe {
	constructor() {
		this.description = {
			displayName: 'Harness Probe',
			name: 'harnessProbe',
			group: ['transform'],
			version: 1,
			description: 'Tags each item, to prove the harness loaded this package',
			defaults: { name: 'Harness Probe' },
			inputs: ['main'],
			outputs: ['main'],
			credentials: [{ name: 'harnessProbeApi', required: false }],
			properties: [{ displayName: 'Greeting', name: 'greeting', type: 'string', default: 'hello' }],
		};
	}
	async execute() {
		const credentials = await this.getCredentials('harnessProbeApi').catch(() => undefined);
		return [this.getInputData().map((item, index) => ({
			json: { probe: this.getNodeParameter('greeting', index), token: credentials ? credentials.token : null, received: item.json },
		}))];
	}
}
exports.HarnessProbe = HarnessProbe;
`;

const PROBE_CREDENTIAL_SOURCE = `'use strict';
class HarnessProbeApi {
	constructor() {
		this.name = 'harnessProbeApi';
		this.displayName = 'Harness Probe API';
		this.properties = [{ displayName: 'Token', name: 'token', type: 'string', typeOptions: { password: true }, default: '' }];
	}
}
exports.HarnessProbeApi = HarnessProbeApi;
`;

async function writeProbePackage(packageDir: string): Promise<void> {
	await writeCommunityPackage(packageDir, {
		name: PROBE_PACKAGE,
		nodes: {
			HarnessProbe: PROBE_NODE_SOURCE,
			// A webhook trigger like ours: without `isFullPath`, n8n serves it on /webhook/<webhookId>/<path>.
			HarnessProbeTrigger: webhookTriggerSource({
				className: 'HarnessProbeTrigger',
				name: 'harnessProbeTrigger',
				displayName: 'Harness Probe Trigger',
				description: 'Starts the workflow on a POST, to prove the harness serves community webhooks',
				path: 'delivery',
				responseMode: 'lastNode',
			}),
		},
		credentials: { HarnessProbeApi: PROBE_CREDENTIAL_SOURCE },
		// Not listed in `files`: proves only what the package ships reaches n8n.
		otherFiles: { 'src/unshipped.txt': 'must not be installed\n' },
	});
}

const manualWorkflow = {
	id: 'probeManualFlow1',
	name: 'Probe via n8n execute',
	nodes: [
		{ id: 'b1f0a6a4-0c55-4c1e-9a43-0d2b4a1e0001', name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} },
		{
			id: 'b1f0a6a4-0c55-4c1e-9a43-0d2b4a1e0002',
			name: 'Harness Probe',
			type: PROBE_NODE_TYPE,
			typeVersion: 1,
			position: [220, 0],
			parameters: { greeting: 'from execute' },
			credentials: { harnessProbeApi: { id: 'probeCredential1', name: 'Probe credential' } },
		},
	],
	connections: { Start: { main: [[{ node: 'Harness Probe', type: 'main', index: 0 }]] } },
};

const webhookWorkflow = {
	id: 'probeWebhookFlw1',
	name: 'Probe via published webhook',
	nodes: [
		{
			id: 'b1f0a6a4-0c55-4c1e-9a43-0d2b4a1e0003',
			name: 'Delivery',
			type: `${PROBE_PACKAGE}.harnessProbeTrigger`,
			typeVersion: 1,
			position: [0, 0],
			webhookId: WEBHOOK_ID,
			parameters: {},
		},
		{
			id: 'b1f0a6a4-0c55-4c1e-9a43-0d2b4a1e0004',
			name: 'Harness Probe',
			type: PROBE_NODE_TYPE,
			typeVersion: 1,
			position: [220, 0],
			parameters: { greeting: 'from webhook' },
		},
	],
	connections: { Delivery: { main: [[{ node: 'Harness Probe', type: 'main', index: 0 }]] } },
};

function check(condition: boolean, message: string): void {
	if (!condition) throw new Error(`check failed: ${message}`);
	console.log(`  ok: ${message}`);
}

async function timed<T>(label: string, action: () => Promise<T>, timings: Record<string, number>): Promise<T> {
	const startedAt = Date.now();
	const result = await action();
	timings[label] = Date.now() - startedAt;
	return result;
}

async function main(): Promise<void> {
	const version = process.argv.slice(2).find((argument) => !argument.startsWith('--')) ?? DEFAULT_N8N_VERSION;
	const keep = process.argv.includes('--keep');
	const timings: Record<string, number> = {};

	await timed('ensureN8n (install if missing)', () => ensureN8n(version), timings);
	await timed('ensureN8n (installed)', () => ensureN8n(version), timings);

	const workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'n8n-harness-smoke-'));
	const packageDir = path.join(workDir, 'probe-package');
	const userFolder = path.join(workDir, 'user');
	console.log(`work folder: ${workDir}`);
	await writeProbePackage(packageDir);

	const prepared = await timed('prepareUserFolder', () => prepareUserFolder({ userFolder, packageDir, n8nVersion: version }), timings);
	const installedFiles = await fs.readdir(prepared.installedDir);
	check(!installedFiles.includes('src') && installedFiles.includes('dist'), `only shipped files installed (${installedFiles.join(', ')})`);

	await timed('importCredentials', () => importCredentials(userFolder, [
		{ id: 'probeCredential1', name: 'Probe credential', type: 'harnessProbeApi', data: { token: PROBE_TOKEN } },
	]), timings);
	await timed('importWorkflows', () => importWorkflows(userFolder, [manualWorkflow, webhookWorkflow]), timings);

	const execution = await timed('executeWorkflow', () => executeWorkflow(userFolder, manualWorkflow.id), timings);
	check(execution.succeeded, 'n8n execute ran the probe workflow');
	const [executed] = nodeOutputJson(execution.run, 'Harness Probe');
	check(executed.probe === 'from execute', `probe node output: ${JSON.stringify(executed)}`);
	check(executed.token === PROBE_TOKEN, 'the imported credential was decrypted for the node');

	await timed('publishWorkflow', () => publishWorkflow(userFolder, webhookWorkflow.id), timings);

	const startedAt = Date.now();
	const n8n = await startN8n({ userFolder });
	try {
		timings['start to /healthz'] = n8n.timings.healthyMs;
		timings['start to published workflows active'] = n8n.timings.readyMs;
		console.log(`n8n is up at ${n8n.url} (owner ${n8n.owner.email} / ${n8n.owner.password})`);
		const response = await fetch(`${n8n.url}/webhook/${WEBHOOK_ID}/delivery`, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify({ hello: 'webhook' }),
		});
		timings['start to first webhook answer'] = Date.now() - startedAt;
		const answer = (await response.json().catch(() => ({}))) as { probe?: string; received?: { body?: unknown } };
		check(response.status === 200 && answer.probe === 'from webhook', `webhook answered ${response.status}: probe=${answer.probe}`);
		check(JSON.stringify(answer.received?.body) === '{"hello":"webhook"}', 'the webhook body reached the probe node');
	} finally {
		await timed('stop', () => n8n.stop(), timings);
	}

	console.log('\ntimings (ms):');
	for (const [label, milliseconds] of Object.entries(timings)) console.log(`  ${label.padEnd(40)} ${milliseconds}`);
	if (keep) console.log(`kept ${workDir}`);
	else await fs.rm(workDir, { recursive: true, force: true });
	console.log('\nsmoke: 1 passed, 0 failed');
}

main().catch((error) => {
	console.error(error);
	console.log('\nsmoke: 0 passed, 1 failed');
	process.exitCode = 1;
});
