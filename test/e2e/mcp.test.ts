/**
 * In a real n8n (the pinned version): n8n's MCP Server Trigger serves our tool variant to an outside
 * MCP client, here the official TypeScript SDK's Client over Streamable HTTP at the published
 * workflow's production URL (`/mcp/<path>`), with bearer auth. The test lists the tools, calls them
 * and reads what reached the sandbox.
 */
import path from 'node:path';

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

import { startSandbox, type Sandbox } from '../../sandbox';
import { buildPackage, installIntoN8n, sandboxCredential } from '../../scripts/n8n/agencyInbox';
import { N8N_WITHOUT_EDITOR, ensureN8n, startN8n, type RunningN8n } from '../../scripts/n8n/harness';
import { SELECTED_N8N_VERSION } from '../../scripts/n8n/install';
import { makeTempDir, removeTempDir } from '../../scripts/tempDirs';
import { connectMcpClient, mcpWorkflow, type ToolCallResult } from './aiWorkflows';
import { getJson, postJson } from './support';

const n8nVersion = SELECTED_N8N_VERSION;
const SETUP_TIMEOUT_MS = 30 * 60_000;
const WORKFLOW_ID = 'e2eMcpServer0001';
const MCP_PATH = 'agency-inbox';
const BEARER_CREDENTIAL = { id: 'e2eMcpBearer001', name: 'MCP clients', type: 'httpBearerAuth' };
const BEARER_TOKEN = 'mcp-e2e-token-0123456789';

/**
 * Tool node name → operation. MCP clients see the node names as tool names (spaces become `_`):
 * short snake_case names read best; one keeps the editor's default-style name to show the conversion.
 */
const TOOLS: Record<string, Record<string, unknown>> = {
	list_proposals: { resource: 'proposal', operation: 'getAll' },
	get_proposal: { resource: 'proposal', operation: 'get' },
	get_room_messages: { resource: 'message', operation: 'getAll' },
	send_message: { resource: 'message', operation: 'send' },
	'Get many chat rooms': { resource: 'chatRoom', operation: 'getAll' },
};

describe(`our tools over MCP (n8n's MCP Server Trigger), in a real n8n ${n8nVersion}`, () => {
	let sandbox: Sandbox | undefined;
	let n8n: RunningN8n | undefined;
	let workDir: string | undefined;
	let client: Client;
	const texts: string[] = [];

	const mcpUrl = () => new URL(`${n8n!.url}/mcp/${MCP_PATH}`);
	const connect = (token: string) => connectMcpClient(mcpUrl(), token);
	/** Calls a tool and keeps the text the client received (to look for the API key afterwards). */
	const call = async (name: string, args: Record<string, unknown>): Promise<ToolCallResult> => {
		const result = (await client.callTool({ name, arguments: args })) as ToolCallResult;
		texts.push(...result.content.map((part) => part.text));
		return result;
	};

	beforeAll(async () => {
		const progress = (line: string) => process.stderr.write(`${line}\n`);
		await Promise.all([buildPackage(progress), ensureN8n(n8nVersion, progress)]);
		sandbox = await startSandbox({ requestsPerMinute: 0 });
		workDir = makeTempDir('e2e-mcp');
		const userFolder = path.join(workDir, 'user');
		await installIntoN8n({
			userFolder,
			n8nVersion,
			credentials: [sandboxCredential(sandbox, 600), { ...BEARER_CREDENTIAL, data: { token: BEARER_TOKEN } }],
			workflows: [
				mcpWorkflow({
					id: WORKFLOW_ID,
					name: 'E2E: Agency Inbox tools over MCP',
					path: MCP_PATH,
					webhookId: 'e2e-mcp-0000-4000-a000-000000000001',
					tools: TOOLS,
					bearerCredential: BEARER_CREDENTIAL,
				}),
			],
			publish: [WORKFLOW_ID],
		});
		n8n = await startN8n({ userFolder, env: N8N_WITHOUT_EDITOR });
		client = await connect(BEARER_TOKEN);
	}, SETUP_TIMEOUT_MS);

	afterAll(async () => {
		await client?.close();
		await n8n?.stop();
		await sandbox?.close();
		if (workDir) removeTempDir(workDir);
	});

	it('refuses a client without the bearer token', async () => {
		await expect(connect('wrong-token')).rejects.toMatchObject({ code: 403, message: expect.stringContaining('Authorization data is wrong!') });
	});

	it('lists our tools under their node names, with our descriptions and described arguments', async () => {
		const { tools } = await client.listTools();
		const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
		expect(Object.keys(byName).sort()).toEqual(['Get_many_chat_rooms', 'get_proposal', 'get_room_messages', 'list_proposals', 'send_message']);
		expect(byName.list_proposals.description).toMatch(/^Lists the agency's proposals .*chatRoomId/);
		expect(byName.send_message.description).toMatch(/SENDS A REAL MESSAGE.*cannot be unsent/);
		const sendArguments = byName.send_message.inputSchema.properties as Record<string, { description?: string }>;
		expect(Object.keys(sendArguments).sort()).toEqual(['freelancerUid', 'message', 'roomId']);
		for (const argument of Object.values(sendArguments)) expect(argument.description?.length).toBeGreaterThan(20);
		expect(byName.get_proposal.inputSchema.required).toEqual(['proposalId']);
	});

	it('a default list call returns 10 compact records, at most 8 KB', async () => {
		const result = await call('list_proposals', {});
		expect(result.isError).toBeFalsy();
		const [{ text }] = result.content;
		const records = JSON.parse(text) as Array<Record<string, unknown>>;
		expect(records).toHaveLength(10);
		expect(records[0]).toHaveProperty('chatRoomId');
		expect(Buffer.byteLength(text)).toBeLessThanOrEqual(8 * 1024);
		process.stderr.write(`MCP list_proposals: ${records.length} records, ${Buffer.byteLength(text)} bytes\n`);
	});

	it("reads a proposal and its room's messages", async () => {
		const proposal = sandbox!.state.proposals[0];
		const [{ text: proposalText }] = (await call('get_proposal', { proposalId: proposal.proposal.uid })).content;
		expect(JSON.parse(proposalText)).toMatchObject([{ proposal: { uid: proposal.proposal.uid } }]);
		const room = sandbox!.state.rooms[0];
		const [{ text: messagesText }] = (await call('get_room_messages', { roomId: room.roomId })).content;
		const messages = JSON.parse(messagesText) as Array<{ storyId: string; message: string }>;
		expect(messages.length).toBeGreaterThan(0);
		expect(messages[0]).toHaveProperty('storyId');
	});

	it('sends one message, as the freelancer the client names', async () => {
		const room = sandbox!.state.rooms[0];
		const freelancerUid = room.vendorProposal!.userId;
		const result = await call('send_message', { roomId: room.roomId, freelancerUid, message: 'Sent by an MCP client' });
		expect(result.isError).toBeFalsy();
		const sent = await getJson<{ data: Array<{ roomId: string; freelancerUid: string; message: string }> }>(`${sandbox!.origin}/_sandbox/messages`);
		expect(sent.data.filter((message) => message.message === 'Sent by an MCP client')).toEqual([
			expect.objectContaining({ roomId: room.roomId, freelancerUid }),
		]);
	});

	it('a failing call is an MCP error whose text says what was wrong and what to do', async () => {
		const result = await call('get_proposal', { proposalId: 'prop-9999' });
		expect(result.isError).toBe(true);
		expect(result.content[0].text).toMatch(/Proposal "prop-9999" was not found.*Do not guess IDs: take it from the list of proposals and call again/s);
		process.stderr.write(`MCP error text: ${result.content[0].text}\n`);
	});

	it.each([
		{
			status: 400,
			tool: 'list_proposals',
			args: {},
			fault: { pathPrefix: '/v1/agency/proposals', status: 400 },
			guidance: /An argument was rejected \(see above\)\. Correct that argument and call again; do not repeat the same call\./,
		},
		{
			status: 403,
			tool: 'send_message',
			args: { roomId: 'room-001', freelancerUid: 'mem-001', message: 'Refused by the service' },
			fault: { method: 'POST', pathPrefix: '/v1/master-inbox/rooms/room-001/stories', status: 403 },
			guidance: /Nothing was sent\. The freelancerUid must be an agency member taking part in this room/,
		},
		{
			status: 429,
			tool: 'get_room_messages',
			args: { roomId: 'room-001' },
			fault: { pathPrefix: '/v1/master-inbox/rooms/room-001/stories', status: 429, retryAfter: 600 },
			guidance: /asked to wait 600 s \(Retry-After\), longer than the 120 s this node waits at most.*Do not retry now; try again in 600 s or tell the user\./s,
		},
	])('a $status is an MCP error whose text says what to do next', async ({ tool, args, fault, guidance }) => {
		await postJson(`${sandbox!.origin}/_sandbox/faults`, { ...fault, count: 1 });
		const result = await call(tool, args);
		expect(result.isError).toBe(true);
		expect(result.content[0].text).toMatch(guidance);
	});

	it('nothing the client receives holds the API key', () => {
		expect(texts.length).toBeGreaterThan(0);
		expect(texts.join('\n')).not.toContain(sandbox!.apiKey);
	});
});
