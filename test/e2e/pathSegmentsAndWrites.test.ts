/**
 * In a real n8n (the pinned version): IDs that cannot be one path segment are refused before any
 * request, and a write whose connection drops after the request left says that its outcome is
 * unknown and is not sent again. One user folder, one `n8n execute` of one workflow whose nodes
 * continue on fail; every assertion on requests reads what reached the sandbox.
 */
import path from 'node:path';
import { startSandbox, type Sandbox } from '../../sandbox';
import { actionNodesWorkflow, buildPackage, installIntoN8n, sandboxCredential } from '../../scripts/n8n/agencyInbox';
import { ensureN8n, executeWorkflow, nodeOutputJson, type ExecutionResult } from '../../scripts/n8n/harness';
import { SELECTED_N8N_VERSION } from '../../scripts/n8n/install';
import { makeTempDir, removeTempDir } from '../../scripts/tempDirs';
import { getJson, postJson } from './support';
import type { RequestLogEntry } from '../../sandbox/core';

const n8nVersion = SELECTED_N8N_VERSION;
const SETUP_TIMEOUT_MS = 30 * 60_000;
const WORKFLOW_ID = 'e2ePathSegment01';


const byId = (value: string) => ({ __rl: true, mode: 'id', value });

/** Node name → parameters. The dot IDs come typed in or from an expression, as from a mapping or the AI Agent. */
function nodesUnderTest(roomId: string, freelancerUid: string, bidIntentId: string): Array<[string, Record<string, unknown>]> {
	return [
		['Get Proposal ..', { resource: 'proposal', operation: 'get', proposalId: byId('..') }],
		['Cancel Bid Intent ..', { resource: 'bidIntent', operation: 'cancel', bidIntentId: '={{ ".." }}' }],
		['Send Message to room ..', { resource: 'message', operation: 'send', roomId: byId('..'), freelancerUid: byId(freelancerUid), message: 'never sent' }],
		['Get Messages of room .', { resource: 'message', operation: 'getAll', roomId: byId('={{ "." }}'), limit: 5, filters: {} }],
		['Send Message, connection dropped', { resource: 'message', operation: 'send', roomId: byId(roomId), freelancerUid: byId(freelancerUid), message: 'Sent once, answer lost' }],
		['Cancel Bid Intent, connection dropped', { resource: 'bidIntent', operation: 'cancel', bidIntentId }],
	];
}

describe(`IDs that are not path segments, and writes whose connection drops, in a real n8n ${n8nVersion}`, () => {
	let sandbox: Sandbox | undefined;
	let workDir: string | undefined;
	let run: ExecutionResult;
	let requests: RequestLogEntry[];
	let roomId: string;
	let bidIntentId: string;
	const sandboxGet = <T>(route: string) => getJson<{ data: T }>(`${sandbox!.origin}/_sandbox/${route}`).then((answer) => answer.data);
	const errorOf = (nodeName: string) => {
		const items = nodeOutputJson(run.run, nodeName);
		expect(items).toHaveLength(1);
		return items[0].error;
	};

	beforeAll(async () => {
		const progress = (line: string) => process.stderr.write(`${line}\n`);
		await Promise.all([buildPackage(progress), ensureN8n(n8nVersion, progress)]);
		sandbox = await startSandbox({ requestsPerMinute: 0 });
		workDir = makeTempDir('e2e-paths');
		const userFolder = path.join(workDir, 'user');
		const room = sandbox.state.rooms[0];
		roomId = room.roomId;
		bidIntentId = sandbox.state.bidIntents.find((intent) => intent.status === 'scheduled')!.id;
		const workflow = actionNodesWorkflow({
			id: WORKFLOW_ID,
			name: 'E2E: path segments and writes with unknown outcome',
			nodes: nodesUnderTest(roomId, room.vendorProposal!.userId, bidIntentId),
		});
		await installIntoN8n({ userFolder, n8nVersion, credentials: [sandboxCredential(sandbox, 600)], workflows: [workflow], publish: [] });

		// The service processes each write, then the connection closes before it answers.
		for (const method of ['POST', 'DELETE']) {
			await postJson(`${sandbox.origin}/_sandbox/faults`, { kind: 'drop', method, pathPrefix: '/v1', afterProcessing: true });
		}
		run = await executeWorkflow(userFolder, WORKFLOW_ID);
		requests = await sandboxGet<RequestLogEntry[]>('requests');
	}, SETUP_TIMEOUT_MS);

	afterAll(async () => {
		await sandbox?.close();
		if (workDir) removeTempDir(workDir);
	});

	it('every node ran and failed only its own item (continue on fail)', () => {
		expect(run.run.data.resultData.error).toBeUndefined();
		expect(Object.keys(run.run.data.resultData.runData).sort()).toEqual(
			['Start', ...nodesUnderTest('', '', '').map(([name]) => name)].sort(),
		);
	});

	it('refuses "." and ".." IDs with a clear message, and no request for them reaches the service', () => {
		expect(errorOf('Get Proposal ..')).toBe('Proposal ".." is not an ID: nothing was sent');
		expect(errorOf('Cancel Bid Intent ..')).toBe('Bid Intent ID ".." is not an ID: nothing was sent');
		expect(errorOf('Send Message to room ..')).toBe('Room ".." is not an ID: nothing was sent');
		expect(errorOf('Get Messages of room .')).toBe('Room "." is not an ID: nothing was sent');
		// The only requests are the two writes below: nothing went to /v1/agency/, /v1/ or /v1/master-inbox/stories.
		expect(requests.map((request) => request.method).sort()).toEqual(['DELETE', 'POST']);
	});

	it('Send Message: exactly one POST reached the service, and the message says the outcome is unknown', async () => {
		expect(requests.filter((request) => request.method === 'POST')).toEqual([
			expect.objectContaining({ path: `/v1/master-inbox/rooms/${roomId}/stories`, status: 0 }),
		]);
		expect(errorOf('Send Message, connection dropped')).toBe(
			'No answer from the Agency Inbox service: the message may already have been sent. Check the room before sending it again.',
		);
		// It was in fact stored, once.
		const messages = await sandboxGet<Array<{ message: string }>>('messages');
		expect(messages.map((message) => message.message)).toEqual(['Sent once, answer lost']);
	});

	it('Bid Intent → Cancel: exactly one DELETE reached the service, and the message says the outcome is unknown', () => {
		expect(requests.filter((request) => request.method === 'DELETE')).toEqual([
			expect.objectContaining({ path: `/v1/bid-intents/${bidIntentId}`, status: 0 }),
		]);
		expect(errorOf('Cancel Bid Intent, connection dropped')).toBe(
			'No answer from the Agency Inbox service: the bid intent may already be cancelled. Check the bid intent before cancelling it again.',
		);
	});
});
