/**
 * Our tool variant in n8n's queue mode (the pinned n8n): Postgres, Redis, a main, two workers (one
 * execution at a time each) and a webhook process (a second one joins for the last test), started
 * once for this file.
 *
 * - n8n's AI Agent, started by a production webhook at the webhook process, with the scripted model
 *   (test/e2e/scriptedModel.ts): the run and its tool calls happen on a worker.
 * - n8n's MCP Server Trigger: the webhook processes serve `/mcp/<path>` and hold the MCP sessions
 *   (also in Redis, so another webhook process can take a session's next call); each tool call
 *   becomes an execution that a worker runs (the trigger, then the tool) and whose result comes back
 *   to the webhook process through Redis (n8n's `mcp-response` job message). Listing tools runs none.
 *
 * Which worker ran an execution comes from the workers' logs; what reached the service from the
 * sandbox's request log.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

import { startSandbox, type Sandbox } from '../../sandbox';
import type { RequestLogEntry } from '../../sandbox/core';
import { sandboxCredential } from '../../scripts/n8n/agencyInbox';
import type { QueueTopology } from '../../scripts/n8n/queue';
import { agentWorkflow, connectMcpClient, mcpSessionId, mcpWorkflow, toolErrorSeenByModel, toolName, toolResultSeenByModel, type ToolCallResult } from '../e2e/aiWorkflows';
import { hasToolResults, startScriptedModel, type ChatRequest, type ScriptedAnswer, type ScriptedModel } from '../e2e/scriptedModel';
import { finishedExecutions, getJson, listExecutions, waitFor, type ExecutionSummary } from '../e2e/support';
import { SETUP_TIMEOUT_MS, WORKER_NAMES, n8nVersion, startQueueForTests, workersThatRan, type QueueForTests } from './support';

const WORKFLOWS = { agent: 'qAiAgentTools001', mcp: 'qMcpServerTool01' };
const AGENT_PATH = 'q-ai-agent';
const MCP_PATH = 'q-agency-inbox';
const OPENAI_CREDENTIAL = { id: 'qOpenAiCred0001', name: 'Scripted model', type: 'openAiApi' };
const BEARER_CREDENTIAL = { id: 'qMcpBearer00001', name: 'MCP clients', type: 'httpBearerAuth' };
const BEARER_TOKEN = 'mcp-queue-token-0123456789';
const AGENT_MESSAGE = 'Sent by the AI Agent on a worker';
const MCP_MESSAGE = 'Sent by an MCP client through a worker';
const NOT_FOUND_GUIDANCE = 'Not Found: Proposal "prop-9999" was not found. No proposal has the ID "prop-9999". Do not guess IDs: take it from the list of proposals and call again.';

/** The Agent's tools in the order the model calls them (its call index). */
const AGENT_TOOLS = {
	'Get many proposals': { resource: 'proposal', operation: 'getAll' },
	'Get a proposal': { resource: 'proposal', operation: 'get' },
	'Send a message to a room': { resource: 'message', operation: 'send' },
};
const MCP_TOOLS = {
	list_proposals: { resource: 'proposal', operation: 'getAll' },
	get_proposal: { resource: 'proposal', operation: 'get' },
	send_message: { resource: 'message', operation: 'send' },
};

describe(`our tools called by n8n's AI Agent and MCP Server Trigger in n8n ${n8nVersion} queue mode`, () => {
	let sandbox: Sandbox;
	let model: ScriptedModel | undefined;
	let queue: QueueForTests | undefined;
	let topology: QueueTopology | undefined;
	let client: Client | undefined;
	const figures: Record<string, unknown> = {};

	const room = () => sandbox.state.rooms[0];
	const freelancerUid = () => room().vendorProposal!.userId;
	/** First answer: our three tools at once (a default list, an unknown proposal, a send); then a final text. */
	const script = (request: ChatRequest): ScriptedAnswer =>
		hasToolResults(request)
			? { text: 'Done.' }
			: {
					toolCalls: [
						{ name: toolName('Get many proposals'), args: {} },
						{ name: toolName('Get a proposal'), args: { proposalId: 'prop-9999' } },
						{ name: toolName('Send a message to a room'), args: { roomId: room().roomId, freelancerUid: freelancerUid(), message: AGENT_MESSAGE } },
					],
				};

	const main = () => topology!.main.current;
	const webhookUrl = () => topology!.webhookProcesses[0].current.url;
	const executionsOf = (workflowId: string) => listExecutions(main().url, main().restHeaders, workflowId);
	const workerOf = (executions: ExecutionSummary[]) => workersThatRan(topology!, executions);
	const requestLog = async () => (await getJson<{ data: RequestLogEntry[] }>(`${sandbox.origin}/_sandbox/requests`)).data;
	/** The requests the service saw after the first `since`, as "METHOD path status", sorted. */
	const requestsSince = async (since: number) =>
		(await requestLog())
			.slice(since)
			.map((request) => `${request.method} ${request.path.replace(/^\/service/, '')} ${request.status}`)
			.sort();
	const messagesWith = async (text: string) => (await getJson<{ data: Array<{ roomId: string; freelancerUid: string; message: string }> }>(`${sandbox.origin}/_sandbox/messages`)).data.filter((message) => message.message === text);

	beforeAll(async () => {
		const startedAt = Date.now();
		sandbox = await startSandbox({ requestsPerMinute: 0 });
		model = await startScriptedModel(script);
		queue = await startQueueForTests('queue-ai', {
			credentials: [sandboxCredential(sandbox, 600), { ...OPENAI_CREDENTIAL, data: model.credentialData }, { ...BEARER_CREDENTIAL, data: { token: BEARER_TOKEN } }],
			workflows: [
				agentWorkflow({
					id: WORKFLOWS.agent,
					name: 'Queue: AI Agent with Agency Inbox tools',
					trigger: {
						name: 'Webhook',
						type: 'n8n-nodes-base.webhook',
						typeVersion: 2,
						webhookId: '9e00bbbb-0000-4000-8000-000000000001',
						// The webhook answers with the Agent's output: it comes back from the worker.
						parameters: { httpMethod: 'POST', path: AGENT_PATH, responseMode: 'lastNode', responseData: 'firstEntryJson', options: {} },
					},
					prompt: 'Look at the proposals and greet the client.',
					tools: AGENT_TOOLS,
					modelCredential: OPENAI_CREDENTIAL,
					agentVersion: 3.1,
				}),
				mcpWorkflow({
					id: WORKFLOWS.mcp,
					name: 'Queue: Agency Inbox tools over MCP',
					path: MCP_PATH,
					webhookId: '9e00bbbb-0000-4000-8000-000000000002',
					tools: MCP_TOOLS,
					bearerCredential: BEARER_CREDENTIAL,
				}),
			],
			publish: [WORKFLOWS.agent, WORKFLOWS.mcp],
			workerConcurrency: 1,
			env: { N8N_LOG_LEVEL: 'info' },
		});
		topology = queue.topology;
		figures['setup ms'] = Date.now() - startedAt;
	}, SETUP_TIMEOUT_MS);

	afterAll(async () => {
		await client?.close().catch(() => undefined);
		await topology?.stop();
		queue?.removeWorkDir();
		await sandbox?.close();
		await model?.close();
		process.stderr.write(`queue AI figures: ${JSON.stringify(figures, null, 1)}\n`);
	});

	describe("n8n's AI Agent started by a production webhook at the webhook process", () => {
		let requestsBefore = 0;
		let execution: ExecutionSummary;

		beforeAll(async () => {
			requestsBefore = (await requestLog()).length;
			const answer = await fetch(`${webhookUrl()}/webhook/${AGENT_PATH}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
			figures['agent webhook answer'] = { status: answer.status, body: await answer.json().catch(() => undefined) };
			[execution] = finishedExecutions(await waitFor('the Agent run', () => executionsOf(WORKFLOWS.agent), (found) => finishedExecutions(found).length === 1, 120_000));
		});

		it('runs on a worker and succeeds; the webhook answers with the Agent output the worker produced', async () => {
			expect(execution.status).toBe('success');
			const [worker] = await workerOf([execution]);
			figures['Agent run on'] = worker;
			expect(WORKER_NAMES).toContain(worker);
			expect(figures['agent webhook answer']).toEqual({ status: 200, body: { output: 'Done.' } });
		});

		it("the model's first request carries our tools' descriptions and argument schemas", () => {
			expect(model!.requests).toHaveLength(2);
			const tools = Object.fromEntries((model!.requests[0].tools ?? []).map((tool) => [tool.function.name, tool.function]));
			expect(Object.keys(tools).sort()).toEqual(Object.keys(AGENT_TOOLS).map(toolName).sort());
			expect(tools.Get_many_proposals.description).toMatch(/^Lists the agency's proposals .*chatRoomId/);
			expect(tools.Send_a_message_to_a_room.description).toMatch(/SENDS A REAL MESSAGE.*cannot be unsent/);
			const send = tools.Send_a_message_to_a_room.parameters.properties ?? {};
			expect(Object.keys(send).sort()).toEqual(['freelancerUid', 'message', 'roomId']);
			for (const argument of Object.values(send)) expect(argument.description?.length).toBeGreaterThan(20);
			expect(tools.Get_a_proposal.parameters.properties?.proposalId?.description).toMatch(/prop-0001/);
		});

		it('each tool call reached the service exactly once; the message was sent once, as the freelancer the model named', async () => {
			expect(await requestsSince(requestsBefore)).toEqual(
				['GET /v1/agency/proposals 200', 'GET /v1/agency/proposals/prop-9999 404', `POST /v1/master-inbox/rooms/${room().roomId}/stories 200`].sort(),
			);
			expect(await messagesWith(AGENT_MESSAGE)).toEqual([expect.objectContaining({ roomId: room().roomId, freelancerUid: freelancerUid() })]);
		});

		it('the model receives the compact list and, for the 404, our guidance', () => {
			const list = toolResultSeenByModel(model!, 0);
			const records = JSON.parse(list) as Array<Record<string, unknown>>;
			expect(records).toHaveLength(10);
			expect(records[0]).toHaveProperty('chatRoomId');
			expect(list).not.toContain('photoUrl');
			expect(Buffer.byteLength(list)).toBeLessThanOrEqual(8 * 1024);
			expect(toolErrorSeenByModel(model!, 1)).toBe(NOT_FOUND_GUIDANCE);
			expect(toolResultSeenByModel(model!, 2)).toContain(AGENT_MESSAGE);
			expect(JSON.stringify(model!.requests)).not.toContain(sandbox.apiKey);
		});
	});

	describe("n8n's MCP Server Trigger: the webhook process serves the client, a worker runs each tool call", () => {
		const mcpUrl = (origin: string) => new URL(`${origin}/mcp/${MCP_PATH}`);
		/** Calls a tool; returns its result, what reached the service meanwhile and the execution it started, with its worker. */
		const callThroughWorker = async (name: string, args: Record<string, unknown>) => {
			const requestsBefore = (await requestLog()).length;
			const executionsBefore = (await executionsOf(WORKFLOWS.mcp)).length;
			const result = (await client!.callTool({ name, arguments: args })) as ToolCallResult;
			const executions = await waitFor(`the execution of ${name}`, () => executionsOf(WORKFLOWS.mcp), (found) => finishedExecutions(found).length === executionsBefore + 1);
			const [execution] = executions;
			const [worker] = await workerOf([execution]);
			figures[`MCP ${name}`] = { execution: execution.id, status: execution.status, worker, executions: executions.length - executionsBefore };
			return { result, requests: await requestsSince(requestsBefore), execution, worker, newExecutions: executions.length - executionsBefore };
		};

		beforeAll(async () => {
			client = await connectMcpClient(mcpUrl(webhookUrl()), BEARER_TOKEN);
		});

		it('the main does not serve /mcp/ (production webhooks only in the webhook processes)', async () => {
			await expect(connectMcpClient(mcpUrl(main().url), BEARER_TOKEN)).rejects.toMatchObject({ code: 404 });
		});

		it('lists our tools with our descriptions, answered by the webhook process without an execution', async () => {
			const executionsBefore = (await executionsOf(WORKFLOWS.mcp)).length;
			const { tools } = await client!.listTools();
			const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
			expect(Object.keys(byName).sort()).toEqual(Object.keys(MCP_TOOLS).sort());
			expect(byName.list_proposals.description).toMatch(/^Lists the agency's proposals .*chatRoomId/);
			expect(Object.keys(byName.send_message.inputSchema.properties ?? {}).sort()).toEqual(['freelancerUid', 'message', 'roomId']);
			expect(await executionsOf(WORKFLOWS.mcp)).toHaveLength(executionsBefore);
		});

		it('list_proposals runs on a worker: one request to the service, 10 compact records to the client', async () => {
			const { result, requests, execution, worker, newExecutions } = await callThroughWorker('list_proposals', {});
			expect(result.isError).toBeFalsy();
			const records = JSON.parse(result.content[0].text) as Array<Record<string, unknown>>;
			expect(records).toHaveLength(10);
			expect(records.map((record) => record.uid)).toEqual(sandbox.state.proposals.slice(0, 10).map((proposal) => proposal.proposal.uid));
			expect(requests).toEqual(['GET /v1/agency/proposals 200']);
			expect(newExecutions).toBe(1);
			expect(execution.status).toBe('success');
			expect(WORKER_NAMES).toContain(worker);
		});

		it('send_message runs on a worker: one message, as the freelancer the client names', async () => {
			const { result, requests, worker, newExecutions } = await callThroughWorker('send_message', { roomId: room().roomId, freelancerUid: freelancerUid(), message: MCP_MESSAGE });
			expect(result.isError).toBeFalsy();
			expect(result.content[0].text).toContain(MCP_MESSAGE);
			expect(requests).toEqual([`POST /v1/master-inbox/rooms/${room().roomId}/stories 200`]);
			expect(await messagesWith(MCP_MESSAGE)).toEqual([expect.objectContaining({ roomId: room().roomId, freelancerUid: freelancerUid() })]);
			expect(newExecutions).toBe(1);
			expect(WORKER_NAMES).toContain(worker);
		});

		it('a 404 on a worker reaches the client as an MCP error with our guidance', async () => {
			const { result, requests, execution, worker } = await callThroughWorker('get_proposal', { proposalId: 'prop-9999' });
			expect(result.isError).toBe(true);
			// The worker invokes the tool after the run (the trigger alone) ended: n8n reports it a success.
			expect(execution.status).toBe('success');
			// n8n's worker hands a failed tool back as JSON: our message and the error's name.
			expect(JSON.parse(result.content[0].text)).toEqual({ error: { message: NOT_FOUND_GUIDANCE, name: 'NodeApiError' } });
			expect(requests).toEqual(['GET /v1/agency/proposals/prop-9999 404']);
			expect(WORKER_NAMES).toContain(worker);
		});

		it("the client's next call in its session at a second webhook process (as behind a load balancer): answered there, run once on a worker", async () => {
			const second = await topology!.addWebhookProcess();
			const requestsBefore = (await requestLog()).length;
			const executionsBefore = (await executionsOf(WORKFLOWS.mcp)).length;
			// What the SDK would send next in this session (its request ids go on counting), posted to the other process.
			const answer = await fetch(mcpUrl(second.current.url), {
				method: 'POST',
				headers: { authorization: `Bearer ${BEARER_TOKEN}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': mcpSessionId(client!)! },
				body: JSON.stringify({ jsonrpc: '2.0', id: 100, method: 'tools/call', params: { name: 'list_proposals', arguments: { limit: 3 } } }),
				signal: AbortSignal.timeout(60_000),
			});
			expect(answer.status).toBe(200);
			// One server-sent event carrying the JSON-RPC response.
			const event = /^data: (.*)$/m.exec(await answer.text())![1];
			const { id, result } = JSON.parse(event) as { id: number; result: ToolCallResult };
			expect(id).toBe(100);
			expect(result.isError).toBeFalsy();
			expect((JSON.parse(result.content[0].text) as Array<{ uid: string }>).map((record) => record.uid)).toEqual(sandbox.state.proposals.slice(0, 3).map((proposal) => proposal.proposal.uid));
			const executions = await waitFor('the execution of the call', () => executionsOf(WORKFLOWS.mcp), (found) => finishedExecutions(found).length === executionsBefore + 1);
			const [worker] = await workerOf(executions.slice(0, 1));
			figures['MCP list_proposals at the second webhook process'] = { execution: executions[0].id, worker };
			expect(WORKER_NAMES).toContain(worker);
			expect(executions).toHaveLength(executionsBefore + 1);
			expect(await requestsSince(requestsBefore)).toEqual(['GET /v1/agency/proposals 200']);
		});
	});
});
