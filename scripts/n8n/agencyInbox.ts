/**
 * This package inside a real n8n: build it, install it as a community package, import the
 * credential and the sample workflows of `workflows/`, and point the sandbox's webhooks at n8n.
 * Shared by `npm start` (scripts/start.ts), the end-to-end tests and the n8n benchmark.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import {
	importCredentials,
	importWorkflows,
	prepareUserFolder,
	publishWorkflows,
	type CredentialToImport,
	type WorkflowToImport,
} from './harness';
import { withoutNpmVariables } from './install';
import { acquireFileLock } from '../fileLock';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');
export const WORKFLOWS_DIR = path.join(REPO_ROOT, 'workflows');

export const PACKAGE_NAME = 'n8n-nodes-agency-inbox';
export const NODE_TYPES = {
	action: `${PACKAGE_NAME}.agencyInbox`,
	trigger: `${PACKAGE_NAME}.agencyInboxTrigger`,
	proposalTrigger: `${PACKAGE_NAME}.agencyInboxProposalTrigger`,
	messageTrigger: `${PACKAGE_NAME}.agencyInboxMessageTrigger`,
	invitationTrigger: `${PACKAGE_NAME}.agencyInboxInvitationTrigger`,
} as const;

/** The polling triggers: n8n runs them at their Poll Times (the `pollTimes` parameter n8n adds to each). */
export const POLLING_TRIGGER_TYPES: readonly string[] = [NODE_TYPES.proposalTrigger, NODE_TYPES.messageTrigger, NODE_TYPES.invitationTrigger];

/** Whether a workflow starts with one of the polling triggers. */
export function usesPollingTrigger(workflow: { nodes: object[] }): boolean {
	return (workflow.nodes as WorkflowNode[]).some((node) => POLLING_TRIGGER_TYPES.includes(node.type));
}

/**
 * The credential the sample workflows reference. People importing a sample into their own n8n pick
 * their own "Agency Inbox API" credential in each Agency Inbox node instead.
 */
export const SAMPLE_CREDENTIAL = { id: 'agencyInboxCred1', name: 'Agency Inbox account', type: 'agencyInboxApi' } as const;

/** The OpenAI-compatible chat model's credential that the AI sample references (n8n's `openAiApi`: API key and base URL). */
export const SAMPLE_MODEL_CREDENTIAL = { id: 'openAiModelCred1', name: 'OpenAI-compatible model', type: 'openAiApi' } as const;
const CHAT_MODEL_NODE_TYPE = '@n8n/n8n-nodes-langchain.lmChatOpenAi';

/** Where the end-to-end runs of every operation write: the room and sender of Send, the bid intent to cancel. */
export interface OperationTargets {
	roomId: string;
	freelancerUid: string;
	bidIntentId: string;
	message: string;
}

/** One Agency Inbox node per operation (name → parameters), as the end-to-end tests run them. */
export function everyOperation({ roomId, freelancerUid, bidIntentId, message }: OperationTargets): Array<[string, Record<string, unknown>]> {
	const byId = (value: string) => ({ __rl: true, mode: 'id', value });
	return [
		['Get Agency', { resource: 'agency', operation: 'get' }],
		['Get Many Members', { resource: 'member', operation: 'getAll', returnAll: true, filters: {} }],
		['Get Pending Invitations', { resource: 'invitation', operation: 'getAll', limit: 5, filters: { status: 'pending' } }],
		// 30 is more than one page (20): the node follows the cursor.
		['Get Many Proposals', { resource: 'proposal', operation: 'getAll', limit: 30, filters: {}, simplify: true }],
		['Get Updated Proposals', { resource: 'proposal', operation: 'getAll', limit: 5, filters: { updatedSince: '2026-05-01T00:00:00' } }],
		['Get Proposal', { resource: 'proposal', operation: 'get', proposalId: byId('prop-0001') }],
		['Get Chat Rooms', { resource: 'chatRoom', operation: 'getAll', limit: 5, filters: { clientMessageOnly: true }, options: {} }],
		['Get Room Messages', { resource: 'message', operation: 'getAll', roomId: byId(roomId), limit: 3, filters: {} }],
		['Send Message', { resource: 'message', operation: 'send', roomId: byId(roomId), freelancerUid: byId(freelancerUid), message }],
		['Cancel Bid Intent', { resource: 'bidIntent', operation: 'cancel', bidIntentId }],
	];
}

/**
 * A workflow of Agency Inbox action nodes (name → parameters), all fed by one Manual Trigger so
 * `n8n execute` can run it, each set to continue on fail so that one failing node does not stop the others.
 */
export function actionNodesWorkflow(workflow: {
	id: string;
	name: string;
	nodes: Array<[string, Record<string, unknown>]>;
	settings?: object;
}): WorkflowToImport {
	const nodeId = (index: number) => `e2e00000-0000-4000-8000-${String(index).padStart(12, '0')}`;
	const credentials = { [SAMPLE_CREDENTIAL.type]: { id: SAMPLE_CREDENTIAL.id, name: SAMPLE_CREDENTIAL.name } };
	return {
		id: workflow.id,
		name: workflow.name,
		nodes: [
			{ id: nodeId(0), name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} },
			...workflow.nodes.map(([name, parameters], index) => ({
				id: nodeId(index + 1),
				name,
				type: NODE_TYPES.action,
				typeVersion: 1,
				position: [300, index * 120],
				parameters,
				credentials,
				onError: 'continueRegularOutput',
			})),
		],
		connections: { Start: { main: [workflow.nodes.map(([name]) => ({ node: name, type: 'main', index: 0 }))] } },
		settings: { executionOrder: 'v1', ...workflow.settings },
	};
}

/** The sandbox origin written in the sample workflows (the CRM URL); `npm start` serves the sandbox there. */
export const SAMPLE_SANDBOX_ORIGIN = 'http://127.0.0.1:5680';
export const SAMPLE_SANDBOX_PORT = 5680;

type Log = (line: string) => void;

/** The sandbox as these scripts use it (sandbox/index.ts, startSandbox). */
export interface SandboxEndpoint {
	url: string;
	origin: string;
	apiKey: string;
	signingSecret: string;
}

/** What `npm run build` reads. */
const BUILD_INPUTS = ['credentials', 'nodes', 'icons', 'scripts/outputSchemas', 'package.json', 'tsconfig.json', 'tsconfig.build.json', 'gulpfile.js'];
/** The build's lock and the record of what dist/ was built from (outside dist/, which is packed). */
const BUILD_STATE_DIR = path.join(REPO_ROOT, 'node_modules', '.cache', 'agency-inbox-build');

/**
 * `npm run build` (tsc + gulp into dist/), unless dist/ was built by this function from the same
 * sources and not replaced since: the real-n8n test files run side by side and each builds first,
 * so one builds and the others wait for it (a lock), then find it done. Prints the build's output
 * only when it fails.
 */
export async function buildPackage(log: Log = console.log): Promise<number> {
	const startedAt = Date.now();
	const release = await acquireFileLock(path.join(BUILD_STATE_DIR, 'lock'), (holder) => log(`waiting for the build running in process ${holder}`));
	try {
		const builtFile = path.join(BUILD_STATE_DIR, 'built.json');
		const wanted = await buildFingerprint();
		const built = existsSync(builtFile) ? await fs.readFile(builtFile, 'utf8') : undefined;
		if (built === JSON.stringify({ ...wanted, dist: await distIdentity() })) {
			log('the package is built from these sources already');
			return Date.now() - startedAt;
		}
		await fs.rm(builtFile, { force: true });
		log('building the package (npm run build)');
		await runBuild();
		await fs.writeFile(builtFile, JSON.stringify({ ...wanted, dist: await distIdentity() }));
	} finally {
		await release();
	}
	return Date.now() - startedAt;
}

function runBuild(): Promise<void> {
	return new Promise<void>((resolve, reject) => {
		const child = spawn('npm', ['run', 'build', '--silent'], { cwd: REPO_ROOT, env: withoutNpmVariables(process.env), stdio: ['ignore', 'pipe', 'pipe'] });
		let output = '';
		child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
		child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
		child.on('error', reject);
		child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`npm run build failed (exit code ${code}):\n${output}`))));
	});
}

/** A hash of every file the build reads. */
async function buildFingerprint(): Promise<{ sources: string }> {
	const hash = createHash('sha256');
	const add = async (relative: string): Promise<void> => {
		const file = path.join(REPO_ROOT, relative);
		if (!existsSync(file)) return;
		if ((await fs.stat(file)).isDirectory()) {
			for (const entry of (await fs.readdir(file)).sort()) await add(path.join(relative, entry));
			return;
		}
		hash.update(`${relative}\0`).update(await fs.readFile(file)).update('\0');
	};
	for (const input of BUILD_INPUTS) await add(input);
	return { sources: hash.digest('hex') };
}

/** dist/ as this build made it: `npm run build` (by hand too) removes and makes it anew, a new inode. */
async function distIdentity(): Promise<string | undefined> {
	const dist = path.join(REPO_ROOT, 'dist');
	if (!existsSync(dist)) return undefined;
	const { ino, birthtimeMs } = await fs.stat(dist);
	return `${ino} ${birthtimeMs}`;
}

/** The credential pointing at the sandbox, with its signing secret for the webhook trigger. */
export function sandboxCredential(sandbox: SandboxEndpoint, requestsPerMinute = 20): CredentialToImport {
	return {
		id: SAMPLE_CREDENTIAL.id,
		name: SAMPLE_CREDENTIAL.name,
		type: SAMPLE_CREDENTIAL.type,
		data: {
			apiKey: sandbox.apiKey,
			baseUrl: sandbox.url,
			requestsPerMinute,
			webhookSigningSecret: sandbox.signingSecret,
			testWebhookSigningSecret: sandbox.signingSecret,
		},
	};
}

export interface SampleWorkflowOptions {
	/** Where the sandbox runs; replaces SAMPLE_SANDBOX_ORIGIN in the workflows. */
	sandboxOrigin: string;
	/** Replaces the poll times of every polling trigger (n8n's `pollTimes` parameter), e.g. pollEverySeconds(5). */
	pollTimes?: object;
	/**
	 * Also the samples that need a chat model (SAMPLE_MODEL_CREDENTIAL). Left out by default: without
	 * a model they cannot run, and once published they would answer the same events as the others.
	 */
	withChatModel?: boolean;
	/** Replaces the model those samples name (`gpt-4.1-mini`), e.g. for another OpenAI-compatible server. */
	chatModelName?: string;
}

/**
 * The chat model `npm start` gives the AI sample: AGENCY_INBOX_OPENAI_API_KEY, AGENCY_INBOX_OPENAI_BASE_URL
 * (default OpenAI's) and AGENCY_INBOX_OPENAI_MODEL (default the sample's). None without a key.
 */
export function demoChatModel(env: NodeJS.ProcessEnv): { credential: CredentialToImport; modelName?: string } | undefined {
	const apiKey = env.AGENCY_INBOX_OPENAI_API_KEY;
	if (!apiKey) return undefined;
	const url = env.AGENCY_INBOX_OPENAI_BASE_URL || 'https://api.openai.com/v1';
	return { credential: { ...SAMPLE_MODEL_CREDENTIAL, data: { apiKey, url } }, modelName: env.AGENCY_INBOX_OPENAI_MODEL || undefined };
}

/** Whether a workflow needs an OpenAI-compatible chat model (a node with SAMPLE_MODEL_CREDENTIAL's type). */
export function needsChatModel(workflow: WorkflowToImport): boolean {
	return (workflow.nodes as WorkflowNode[]).some((node) => node.credentials?.[SAMPLE_MODEL_CREDENTIAL.type] !== undefined);
}

/**
 * Poll times that make n8n poll every `seconds` (a divisor of 60). n8n refuses a poll time that fires
 * more than once a minute (`*\/5 * * * * *`), but accepts several that each fire once a minute at a
 * fixed second, which together poll as often as tests and demos need.
 */
export function pollEverySeconds(seconds: number): object {
	const count = Math.floor(60 / seconds);
	return { item: Array.from({ length: count }, (_, index) => ({ mode: 'custom', cronExpression: `${index * seconds} * * * * *` })) };
}

/** The sample workflows of `workflows/*.json`, ready to import next to a sandbox at sandboxOrigin. */
export async function loadSampleWorkflows(options: SampleWorkflowOptions): Promise<WorkflowToImport[]> {
	const files = (await fs.readdir(WORKFLOWS_DIR)).filter((file) => file.endsWith('.json')).sort();
	const workflows: WorkflowToImport[] = [];
	for (const file of files) {
		const text = (await fs.readFile(path.join(WORKFLOWS_DIR, file), 'utf8')).split(SAMPLE_SANDBOX_ORIGIN).join(options.sandboxOrigin);
		const workflow = JSON.parse(text) as WorkflowToImport;
		if (needsChatModel(workflow) && !options.withChatModel) continue;
		if (options.pollTimes) {
			for (const node of workflow.nodes as WorkflowNode[]) {
				if (POLLING_TRIGGER_TYPES.includes(node.type)) node.parameters.pollTimes = options.pollTimes;
			}
		}
		if (options.chatModelName) {
			for (const node of workflow.nodes as WorkflowNode[]) {
				if (node.type === CHAT_MODEL_NODE_TYPE) node.parameters.model = { __rl: true, mode: 'id', value: options.chatModelName };
			}
		}
		workflows.push(workflow);
	}
	return workflows;
}

/**
 * The sample `npm start` publishes of those that reply to a client's chat message: the webhook
 * auto-reply (workflows/chat-auto-reply.json). Each reply sample answers every client message, so
 * with two published a client would get two replies.
 */
export const DEMO_REPLY_SAMPLE_ID = 'aiSampleChatFlw1';

/** Whether a workflow sends chat messages (an Agency Inbox node's Message → Send): one of the reply samples. */
export function sendsMessages(workflow: { nodes: object[] }): boolean {
	return (workflow.nodes as WorkflowNode[]).some((node) => node.type === NODE_TYPES.action && node.parameters.resource === 'message' && node.parameters.operation === 'send');
}

/** The samples `npm start` publishes: every sample but the reply samples other than DEMO_REPLY_SAMPLE_ID, which it imports unpublished. */
export function demoPublishedSamples<Workflow extends { id: string; nodes: object[] }>(workflows: Workflow[]): Workflow[] {
	return workflows.filter((workflow) => !sendsMessages(workflow) || workflow.id === DEMO_REPLY_SAMPLE_ID);
}

export interface WorkflowNode {
	id: string;
	name: string;
	type: string;
	typeVersion: number;
	position: [number, number];
	parameters: Record<string, unknown>;
	webhookId?: string;
	credentials?: Record<string, { id: string; name: string }>;
	[property: string]: unknown;
}

/** The webhook path our trigger declares, read from the built node (n8n serves `/webhook/<webhookId>/<path>`). */
async function triggerWebhookPath(): Promise<string> {
	const nodeFile = path.join(REPO_ROOT, 'dist', 'nodes', 'AgencyInboxTrigger', 'AgencyInboxTrigger.node.js');
	const exported = require(nodeFile) as Record<string, new () => { description: { webhooks?: Array<{ path: string }> } }>;
	const [NodeClass] = Object.values(exported);
	const webhookPath = new NodeClass().description.webhooks?.[0]?.path;
	if (!webhookPath) throw new Error(`${nodeFile} declares no webhook path`);
	return webhookPath;
}

export interface TriggerWebhook {
	workflowId: string;
	workflowName: string;
	nodeName: string;
	productionUrl: string;
}

/** n8n's production URL of every Agency Inbox Trigger in the workflows. */
export async function triggerWebhooks(n8nUrl: string, workflows: WorkflowToImport[]): Promise<TriggerWebhook[]> {
	const webhooks: TriggerWebhook[] = [];
	let webhookPath: string | undefined;
	for (const workflow of workflows) {
		for (const node of workflow.nodes as WorkflowNode[]) {
			if (node.type !== NODE_TYPES.trigger || node.disabled) continue;
			webhookPath ??= await triggerWebhookPath();
			webhooks.push({
				workflowId: workflow.id,
				workflowName: workflow.name,
				nodeName: node.name,
				productionUrl: `${n8nUrl}/webhook/${node.webhookId}/${webhookPath}`,
			});
		}
	}
	return webhooks;
}

/** Registers each URL with the sandbox's webhook sender (signed with the sandbox's secret). */
export async function registerWebhookEndpoints(sandboxOrigin: string, urls: string[]): Promise<Array<{ id: string; url: string }>> {
	const endpoints: Array<{ id: string; url: string }> = [];
	for (const url of urls) {
		const response = await fetch(`${sandboxOrigin}/_sandbox/webhook-endpoints`, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify({ url }),
		});
		if (!response.ok) throw new Error(`registering ${url} with the sandbox failed: ${response.status} ${await response.text()}`);
		const { id } = (await response.json()) as { id: string };
		endpoints.push({ id, url });
	}
	return endpoints;
}

export interface InstallIntoN8nOptions {
	userFolder: string;
	n8nVersion?: string;
	credentials: CredentialToImport[];
	workflows: WorkflowToImport[];
	/** Ids of the workflows to publish (activate). */
	publish: string[];
	log?: Log;
}

const SETUP_FINGERPRINT_FILE = 'agency-inbox-setup.json';

/**
 * Installs the built package into the user folder, imports credentials and workflows and publishes
 * the chosen ones. The n8n CLI costs seconds per command, so when the same credentials and
 * workflows were already imported into this folder, only the package is refreshed.
 */
export async function installIntoN8n(options: InstallIntoN8nOptions): Promise<{ imported: boolean }> {
	const log = options.log ?? (() => undefined);
	await prepareUserFolder({ userFolder: options.userFolder, packageDir: REPO_ROOT, n8nVersion: options.n8nVersion });
	const fingerprint = createHash('sha256')
		.update(JSON.stringify({ credentials: options.credentials, workflows: options.workflows, publish: options.publish }))
		.digest('hex');
	const fingerprintFile = path.join(options.userFolder, SETUP_FINGERPRINT_FILE);
	if (existsSync(fingerprintFile) && JSON.parse(await fs.readFile(fingerprintFile, 'utf8')).fingerprint === fingerprint) {
		log('credential and workflows unchanged since the last start: not imported again');
		return { imported: false };
	}
	await fs.rm(fingerprintFile, { force: true });
	await importCredentials(options.userFolder, options.credentials);
	const importPath = await importWorkflows(options.userFolder, options.workflows);
	log(`importing ${options.credentials.length} credential(s) and ${options.workflows.length} workflow(s): ${importPath}`);
	const publishPath = await publishWorkflows(options.userFolder, options.publish);
	log(`publishing ${options.publish.length} workflow(s): ${publishPath}`);
	await fs.writeFile(fingerprintFile, JSON.stringify({ fingerprint }) + '\n');
	return { imported: true };
}
