/**
 * Bytes per default call of each list operation in tool mode (the `agencyInboxTool` variant, no
 * arguments from the model), against the sandbox, through n8n-core's engine; beside it the same
 * call of the normal node with its defaults. Target: at most 8 KB per default tool call.
 *
 *   node --require ts-node/register/transpile-only bench/toolResultSizes.ts
 */
import type { INodeParameters } from 'n8n-workflow';

import type { AgencyInbox as AgencyInboxNode } from '../nodes/AgencyInbox/AgencyInbox.node';
import { startSandbox } from '../sandbox';
import { asAiTool } from '../test/helpers/aiTool';
import { runNode } from '../test/helpers/engine';

// Under ts-node, Node resolves `AgencyInbox.node` to the codex file AgencyInbox.node.json first.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { AgencyInbox } = require('../nodes/AgencyInbox/AgencyInbox.node.ts') as { AgencyInbox: typeof AgencyInboxNode };

const TARGET_BYTES = 8 * 1024;
const OPERATIONS: Array<[string, INodeParameters]> = [
	['Proposal → Get Many', { resource: 'proposal', operation: 'getAll' }],
	['Chat Room → Get Many', { resource: 'chatRoom', operation: 'getAll' }],
	['Message → Get Many (room-001)', { resource: 'message', operation: 'getAll', roomId: { __rl: true, mode: 'id', value: 'room-001' } }],
	['Member → Get Many', { resource: 'member', operation: 'getAll' }],
	['Invitation → Get Many', { resource: 'invitation', operation: 'getAll' }],
];

async function main() {
	const sandbox = await startSandbox({ requestsPerMinute: 0 });
	const credentials = { agencyInboxApi: { apiKey: sandbox.apiKey, baseUrl: sandbox.url, requestsPerMinute: 1000 } };
	try {
		console.log('operation | tool: records, bytes, bytes/8 KB | normal node: records, bytes');
		for (const [name, parameters] of OPERATIONS) {
			const tool = await runNode({ type: 'agencyInboxTool', nodeType: asAiTool(new AgencyInbox()), parameters, credentials });
			const normal = await runNode({ type: 'agencyInbox', nodeType: new AgencyInbox(), parameters, credentials });
			const toolBytes = Buffer.byteLength(JSON.stringify(tool.items.map((item) => item.json)));
			const normalBytes = Buffer.byteLength(JSON.stringify(normal.items.map((item) => item.json)));
			console.log(
				`${name} | ${tool.items.length}, ${toolBytes} B, ${(toolBytes / TARGET_BYTES).toFixed(2)} | ${normal.items.length}, ${normalBytes} B`,
			);
		}
	} finally {
		await sandbox.close();
	}
}

void main();
