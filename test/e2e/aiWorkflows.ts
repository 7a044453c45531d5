/**
 * The AI workflows of the end-to-end and queue-mode tests: n8n's AI Agent driving our tool variant
 * with the scripted model (scriptedModel.ts), and n8n's MCP Server Trigger serving our tools to the
 * official MCP SDK client over Streamable HTTP with bearer auth.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { PACKAGE_NAME, SAMPLE_CREDENTIAL } from '../../scripts/n8n/agencyInbox';
import type { WorkflowToImport } from '../../scripts/n8n/harness';
import { toolCallId, type ScriptedModel } from './scriptedModel';

/** Tool node name → the parameters of its Agency Inbox operation. */
export type ToolNodes = Record<string, Record<string, unknown>>;

/** The name a model or MCP client sees for a tool node (n8n replaces spaces with `_`). */
export const toolName = (nodeName: string) => nodeName.replace(/ /g, '_');

/** Node ids unique per workflow kind: `prefix` is the fourth group of the UUID, e.g. '9000'. */
const nodeIds = (prefix: string) => (index: number) => `e2e00000-0000-4000-${prefix}-${String(index).padStart(12, '0')}`;

function agencyToolNodes(tools: ToolNodes, id: (index: number) => string, extra: object): Array<{ name: string } & Record<string, unknown>> {
	return Object.entries(tools).map(([name, parameters], index) => ({
		id: id(10 + index),
		name,
		type: `${PACKAGE_NAME}.agencyInboxTool`,
		typeVersion: 1,
		position: [200 + index * 150, 300],
		parameters,
		credentials: { [SAMPLE_CREDENTIAL.type]: { id: SAMPLE_CREDENTIAL.id, name: SAMPLE_CREDENTIAL.name } },
		...extra,
	}));
}

export interface AgentWorkflowOptions {
	id: string;
	name: string;
	/** The node that starts the run (its name, type, version, parameters, webhookId...); it feeds the AI Agent. */
	trigger: { name: string } & Record<string, unknown>;
	prompt: string;
	tools: ToolNodes;
	/** The openAiApi credential pointing at the scripted model. */
	modelCredential: { id: string; name: string };
	agentVersion: number;
	/** Added to every tool node (e.g. `onError` for n8n 1.x). */
	toolNodeExtra?: object;
}

/** The trigger → AI Agent, with the OpenAI Chat Model (the scripted model) and our tools, in execution order v1. */
export function agentWorkflow(options: AgentWorkflowOptions): WorkflowToImport {
	const id = nodeIds('9000');
	const toolNodes = agencyToolNodes(options.tools, id, options.toolNodeExtra ?? {});
	const toAgent = (type: string) => ({ [type]: [[{ node: 'AI Agent', type, index: 0 }]] });
	return {
		id: options.id,
		name: options.name,
		nodes: [
			{ id: id(0), position: [0, 0], ...options.trigger },
			{ id: id(1), name: 'AI Agent', type: '@n8n/n8n-nodes-langchain.agent', typeVersion: options.agentVersion, position: [300, 0], parameters: { promptType: 'define', text: options.prompt, options: {} } },
			{
				id: id(2),
				name: 'OpenAI Chat Model',
				type: '@n8n/n8n-nodes-langchain.lmChatOpenAi',
				typeVersion: 1.2,
				position: [100, 300],
				parameters: { model: { __rl: true, mode: 'id', value: 'scripted' }, options: {} },
				credentials: { openAiApi: { id: options.modelCredential.id, name: options.modelCredential.name } },
			},
			...toolNodes,
		],
		connections: {
			[options.trigger.name]: { main: [[{ node: 'AI Agent', type: 'main', index: 0 }]] },
			'OpenAI Chat Model': toAgent('ai_languageModel'),
			...Object.fromEntries(toolNodes.map((node) => [node.name, toAgent('ai_tool')])),
		},
		settings: { executionOrder: 'v1' },
	};
}

/**
 * What the model received from the nth tool it called, in request `requestIndex` (the turn after its
 * calls): the tool message's content, as sent.
 */
export function toolResultSeenByModel(model: ScriptedModel, callIndex: number, requestIndex = 1): string {
	const message = model.requests[requestIndex]?.messages.find((candidate) => candidate.role === 'tool' && candidate.tool_call_id === toolCallId(callIndex));
	if (typeof message?.content !== 'string') throw new Error(`no result of tool call ${callIndex} in the model's request ${requestIndex}`);
	return message.content;
}

/** A failed tool reaches the model as `[{"error": "<message>"}]`. */
export const toolErrorSeenByModel = (model: ScriptedModel, callIndex: number, requestIndex = 1): string =>
	(JSON.parse(toolResultSeenByModel(model, callIndex, requestIndex)) as Array<{ error: string }>)[0].error;

export interface McpWorkflowOptions {
	id: string;
	name: string;
	/** The server's path: clients connect to `<n8n>/mcp/<path>`. */
	path: string;
	webhookId: string;
	tools: ToolNodes;
	/** The httpBearerAuth credential clients must present. */
	bearerCredential: { id: string; name: string };
}

/** n8n's MCP Server Trigger (v2, Streamable HTTP, bearer auth) with our tools. */
export function mcpWorkflow(options: McpWorkflowOptions): WorkflowToImport {
	const id = nodeIds('a000');
	const toolNodes = agencyToolNodes(options.tools, id, {});
	return {
		id: options.id,
		name: options.name,
		nodes: [
			{
				id: id(0),
				name: 'MCP Server Trigger',
				type: '@n8n/n8n-nodes-langchain.mcpTrigger',
				typeVersion: 2,
				position: [300, 0],
				webhookId: options.webhookId,
				parameters: { authentication: 'bearerAuth', path: options.path },
				credentials: { httpBearerAuth: { id: options.bearerCredential.id, name: options.bearerCredential.name } },
			},
			...toolNodes,
		],
		connections: Object.fromEntries(toolNodes.map((node) => [node.name, { ai_tool: [[{ node: 'MCP Server Trigger', type: 'ai_tool', index: 0 }]] }])),
		settings: { executionOrder: 'v1' },
	};
}

/** The MCP SDK's client, connected over Streamable HTTP with a bearer token (a new session). */
export async function connectMcpClient(url: URL, token: string): Promise<Client> {
	const client = new Client({ name: 'agency-inbox-e2e', version: '1.0.0' });
	await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
	return client;
}

/** The session id of a client connected by connectMcpClient. */
export const mcpSessionId = (client: Client) => (client.transport as StreamableHTTPClientTransport).sessionId;

/** What an MCP tool call returns: text parts, and isError when the tool failed. */
export interface ToolCallResult {
	isError?: boolean;
	content: Array<{ type: string; text: string }>;
}
