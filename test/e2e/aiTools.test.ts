/**
 * In a real n8n (the pinned version, or AGENCY_INBOX_N8N_VERSION): n8n's AI Agent (3) drives our
 * tool variant with a scripted OpenAI-compatible chat model that this test serves on loopback (n8n's
 * OpenAI Chat Model takes a base URL in its credential). The model's first answer calls six tools at
 * once; the test reads what the model received: the tool descriptions and argument schemas (first
 * request) and each tool's result or error text (second request).
 *
 * The workflow runs in execution order v1, as every workflow the editor creates. In the legacy order
 * (a workflow imported without `settings.executionOrder`), n8n 2.40.7 queues the resumed Agent ahead
 * of the tools it asked for: the model's second request then carries "" for every tool, and the run
 * ends "error" when the last tool run failed.
 */
import path from 'node:path';

import { startSandbox, type Sandbox } from '../../sandbox';
import { buildPackage, installIntoN8n, sandboxCredential } from '../../scripts/n8n/agencyInbox';
import { ensureN8n, executeWorkflow, nodeOutputJson, type ExecutionResult } from '../../scripts/n8n/harness';
import { n8nMajorVersion, SELECTED_N8N_VERSION } from '../../scripts/n8n/install';
import { makeTempDir, removeTempDir } from '../../scripts/tempDirs';
import { agentWorkflow, toolErrorSeenByModel, toolName, toolResultSeenByModel } from './aiWorkflows';
import { hasToolResults, startScriptedModel, type ChatRequest, type ScriptedAnswer, type ScriptedModel } from './scriptedModel';
import { postJson } from './support';

const n8nVersion = SELECTED_N8N_VERSION;
const SETUP_TIMEOUT_MS = 30 * 60_000;
const WORKFLOW_ID = 'e2eAiTools000001';
const OPENAI_CREDENTIAL = { id: 'e2eOpenAiCred01', name: 'Scripted model', type: 'openAiApi' };

/** Tool node name → its operation and the arguments the scripted model gives. */
const TOOLS: Record<string, { parameters: Record<string, unknown>; args: Record<string, unknown> }> = {
	// Default calls: the model gives no limit.
	'Get many proposals': { parameters: { resource: 'proposal', operation: 'getAll' }, args: {} },
	'Get many chat rooms': { parameters: { resource: 'chatRoom', operation: 'getAll' }, args: {} },
	'Get a proposal': { parameters: { resource: 'proposal', operation: 'get' }, args: { proposalId: 'prop-9999' } },
	'Get many invitations': { parameters: { resource: 'invitation', operation: 'getAll' }, args: { limit: 10 } },
	'Get many members': { parameters: { resource: 'member', operation: 'getAll' }, args: { limit: 10 } },
	'Send a message to a room': { parameters: { resource: 'message', operation: 'send' }, args: { roomId: 'room-001', freelancerUid: 'mem-001', message: 'Hello from the agent' } },
};

/** First answer: call every tool; after the tool results: a final text. */
function script(request: ChatRequest): ScriptedAnswer {
	if (hasToolResults(request)) return { text: 'Done.' };
	return { toolCalls: Object.entries(TOOLS).map(([name, { args }]) => ({ name: toolName(name), args })) };
}

const workflow = () =>
	agentWorkflow({
		id: WORKFLOW_ID,
		name: 'E2E: AI Agent with Agency Inbox tools',
		trigger: { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, parameters: {} },
		prompt: 'Look at the inbox and the proposals.',
		tools: Object.fromEntries(Object.entries(TOOLS).map(([name, { parameters }]) => [name, parameters])),
		modelCredential: OPENAI_CREDENTIAL,
		agentVersion: 3,
		// n8n 1.x stops the run at a failing tool unless the tool node continues on error; 2.x hands the
		// error to the model by default, which this test proves.
		...(n8nMajorVersion(n8nVersion) < 2 && { toolNodeExtra: { onError: 'continueRegularOutput' } }),
	});

describe(`n8n's AI Agent with the Agency Inbox tools, in a real n8n ${n8nVersion}`, () => {
	let sandbox: Sandbox | undefined;
	let model: ScriptedModel | undefined;
	let workDir: string | undefined;
	let run: ExecutionResult;

	beforeAll(async () => {
		const progress = (line: string) => process.stderr.write(`${line}\n`);
		await Promise.all([buildPackage(progress), ensureN8n(n8nVersion, progress)]);
		sandbox = await startSandbox({ requestsPerMinute: 0 });
		model = await startScriptedModel(script);
		workDir = makeTempDir('e2e-ai-tools');
		const userFolder = path.join(workDir, 'user');
		await installIntoN8n({
			userFolder,
			n8nVersion,
			credentials: [sandboxCredential(sandbox, 600), { ...OPENAI_CREDENTIAL, data: model.credentialData }],
			workflows: [workflow()],
			publish: [],
		});
		await postJson(`${sandbox.origin}/_sandbox/faults`, { pathPrefix: '/v1/agency/invitations', status: 400, count: 1 });
		await postJson(`${sandbox.origin}/_sandbox/faults`, { pathPrefix: '/v1/agency/members', status: 429, retryAfter: 600, count: 1 });
		await postJson(`${sandbox.origin}/_sandbox/faults`, { method: 'POST', pathPrefix: '/v1/master-inbox/rooms/room-001/stories', status: 403, count: 1 });
		run = await executeWorkflow(userFolder, WORKFLOW_ID);
	}, SETUP_TIMEOUT_MS);

	afterAll(async () => {
		await sandbox?.close();
		await model?.close();
		if (workDir) removeTempDir(workDir);
	});

	const firstRequest = () => model!.requests[0];
	const toolResult = (nodeName: string) => toolResultSeenByModel(model!, Object.keys(TOOLS).indexOf(nodeName));
	const errorSeenByModel = (nodeName: string) => toolErrorSeenByModel(model!, Object.keys(TOOLS).indexOf(nodeName));

	it('the model was asked twice: with our tools, then with their results; failing tools do not fail the run', () => {
		expect(model!.requests).toHaveLength(2);
		expect(run.run.data.resultData.error).toBeUndefined();
		expect(run.succeeded).toBe(true);
		expect(nodeOutputJson(run.run, 'AI Agent')[0].output).toBe('Done.');
	});

	it('the model receives a description per tool that says what it returns and its side effects', () => {
		const tools = Object.fromEntries((firstRequest().tools ?? []).map((tool) => [tool.function.name, tool.function]));
		expect(Object.keys(tools).sort()).toEqual(Object.keys(TOOLS).map(toolName).sort());
		expect(tools.Get_many_proposals.description).toMatch(/^Lists the agency's proposals .*chatRoomId/);
		expect(tools.Get_many_proposals.description).not.toMatch(/in Agency Inbox$/);
		expect(tools.Send_a_message_to_a_room.description).toMatch(/SENDS A REAL MESSAGE.*cannot be unsent/);
	});

	it('the arguments in the schemas carry descriptions', () => {
		const tools = Object.fromEntries((firstRequest().tools ?? []).map((tool) => [tool.function.name, tool.function]));
		const send = tools.Send_a_message_to_a_room.parameters.properties ?? {};
		expect(Object.keys(send).sort()).toEqual(['freelancerUid', 'message', 'roomId']);
		for (const argument of Object.values(send)) expect(argument.description?.length).toBeGreaterThan(20);
		expect(tools.Get_many_proposals.parameters.properties?.limit).toMatchObject({ type: 'number' });
		expect(tools.Get_a_proposal.parameters.properties?.proposalId?.description).toMatch(/prop-0001/);
	});

	it.each([
		['Get many proposals', ['uid', 'status', 'jobTitle', 'freelancerUid', 'chatRoomId']],
		['Get many chat rooms', ['roomId', 'roomName', 'lastMessage', 'lastMessageAt', 'participants', 'proposalId']],
	])('%s, a default call: 10 compact records, at most 8 KB', (nodeName, keys) => {
		const content = toolResult(nodeName);
		const records = JSON.parse(content) as Array<Record<string, unknown>>;
		expect(records).toHaveLength(10);
		for (const key of keys) expect(records[0]).toHaveProperty(key);
		expect(Buffer.byteLength(content)).toBeLessThanOrEqual(8 * 1024);
		expect(content).not.toContain('photoUrl');
		process.stderr.write(`${nodeName}: ${records.length} records, ${Buffer.byteLength(content)} bytes to the model\n`);
	});

	it('404: the model reads what was wrong and not to guess IDs', () => {
		expect(errorSeenByModel('Get a proposal')).toBe(
			'Not Found: Proposal "prop-9999" was not found. No proposal has the ID "prop-9999". Do not guess IDs: take it from the list of proposals and call again.',
		);
	});

	it('400: the model reads to correct the argument, not to repeat the call', () => {
		expect(errorSeenByModel('Get many invitations')).toBe(
			'Bad Request: Injected fault: status 400. An argument was rejected (see above). Correct that argument and call again; do not repeat the same call.',
		);
	});

	it('403 on Send: the model reads that nothing was sent and which freelancer may send', () => {
		expect(errorSeenByModel('Send a message to a room')).toMatch(
			/^Forbidden: Injected fault: status 403\. Nothing was sent\. The freelancerUid must be an agency member taking part in this room/,
		);
	});

	it('429 with Retry-After 600: the model reads that the node gave up beyond its 120 s cap, and when to try again', () => {
		expect(errorSeenByModel('Get many members')).toBe(
			'Too Many Requests: Injected fault: status 429. The service answered "too many requests" and asked to wait 600 s (Retry-After), longer than the 120 s this node waits at most, so it gave up without waiting that long. Nothing was done. Do not retry now; try again in 600 s or tell the user.',
		);
	});

	it('nothing the model receives holds the API key', () => {
		expect(JSON.stringify(model!.requests)).not.toContain(sandbox!.apiKey);
	});
});
