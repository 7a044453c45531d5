/**
 * The polling variant of the chat auto-reply (workflows/chat-auto-reply-polling.json): the webhook
 * sample's next nodes behind the Agency Inbox Message Trigger, run through n8n-core's engine against
 * the sandbox (the Room of Send is the item's chat.id, as in chatAutoReply.test.ts). Its run in a real
 * n8n is the end-to-end tests' part.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { AgencyInboxMessageTrigger } from '../../nodes/AgencyInboxMessageTrigger/AgencyInboxMessageTrigger.node';
import { NODE_TYPES, SAMPLE_SANDBOX_ORIGIN, WORKFLOWS_DIR, loadSampleWorkflows, pollEverySeconds, type WorkflowNode } from '../../scripts/n8n/agencyInbox';
import { TriggerWorkflow } from '../helpers/engine';
import { byId, control, credentialFor, jsonOf, runAgencyInbox, takeRequests, useSandbox } from '../nodes/AgencyInbox/fixtures';

interface Sample {
	id: string;
	nodes: Array<WorkflowNode & { parameters: INodeParameters }>;
	connections: object;
}

const readSample = (file: string) => JSON.parse(fs.readFileSync(path.join(WORKFLOWS_DIR, file), 'utf8')) as Sample;
const polling = readSample('chat-auto-reply-polling.json');
const webhook = readSample('chat-auto-reply.json');
const steps = (sample: Sample) => sample.nodes.filter((node) => node.type !== 'n8n-nodes-base.stickyNote');
const parametersOf = (sample: Sample, name: string) => sample.nodes.find((node) => node.name === name)!.parameters;

const currentSandbox = useSandbox();

describe('as saved', () => {
	it("is the webhook sample's workflow behind the Message Trigger, with a reply that tells the two apart", () => {
		expect(steps(polling).map((node) => [node.name, node.type])).toEqual([
			['Client Message', NODE_TYPES.messageTrigger],
			['Get Proposal', NODE_TYPES.action],
			['Send Auto-Reply', NODE_TYPES.action],
		]);
		expect(polling.connections).toEqual(webhook.connections);
		expect(parametersOf(polling, 'Get Proposal')).toEqual(parametersOf(webhook, 'Get Proposal'));
		const { message: pollingText, ...pollingSend } = parametersOf(polling, 'Send Auto-Reply');
		const { message: webhookText, ...webhookSend } = parametersOf(webhook, 'Send Auto-Reply');
		expect(pollingSend).toEqual(webhookSend);
		// The end-to-end tests count each sample's replies by how they begin.
		expect(String(pollingText)).toMatch(/^=Thanks for writing!/);
		expect(String(webhookText)).toMatch(/^=Thanks for your message!/);
	});

	it('has ids of its own, no webhook, and polls every minute as saved', () => {
		const others = fs.readdirSync(WORKFLOWS_DIR).filter((file) => file.endsWith('.json') && file !== 'chat-auto-reply-polling.json').map(readSample);
		expect(others.map((sample) => sample.id)).not.toContain(polling.id);
		const otherNodeIds = others.flatMap((sample) => sample.nodes.map((node) => node.id));
		expect(polling.nodes.filter((node) => otherNodeIds.includes(node.id))).toEqual([]);
		expect(polling.nodes.filter((node) => node.webhookId !== undefined)).toEqual([]);
		expect(parametersOf(polling, 'Client Message').pollTimes).toEqual({ item: [{ mode: 'everyMinute' }] });
	});

	it('polls at the poll times npm start and the tests give the polling triggers', async () => {
		const workflows = await loadSampleWorkflows({ sandboxOrigin: SAMPLE_SANDBOX_ORIGIN, pollTimes: pollEverySeconds(15) });
		const loaded = workflows.find((workflow) => workflow.id === polling.id)!;
		const trigger = (loaded.nodes as WorkflowNode[]).find((node) => node.name === 'Client Message')!;
		expect(trigger.parameters.pollTimes).toEqual({ item: ['0', '15', '30', '45'].map((second) => ({ mode: 'custom', cronExpression: `${second} * * * * *` })) });
	});
});

it("answers each new client message once, as the proposal's freelancer, and its own replies start no run", async () => {
	const sandbox = currentSandbox();
	const trigger = new TriggerWorkflow({
		type: 'agencyInboxMessageTrigger',
		nodeType: new AgencyInboxMessageTrigger(),
		parameters: parametersOf(polling, 'Client Message'),
		credentials: { agencyInboxApi: credentialFor(sandbox) },
	});
	expect(await trigger.poll()).toBeNull(); // activation: the starting point, nothing historic
	const rooms = sandbox.state.rooms.filter((room) => room.vendorProposal !== null).slice(0, 3);
	for (const room of rooms) await control(sandbox, 'POST', 'changes', { kind: 'clientMessage', roomId: room.roomId, text: `Question about ${room.topic}` });
	const items = ((await trigger.poll())?.[0] ?? []).map((item) => item.json);
	expect(items.map((item) => (item.payload as { chat: { id: string } }).chat.id)).toEqual(rooms.map((room) => room.roomId));

	await takeRequests(sandbox);
	const proposals = await runAgencyInbox(sandbox, parametersOf(polling, 'Get Proposal'), { inputItems: items });
	expect(proposals.error?.message).toBeUndefined();
	for (const [index, item] of items.entries()) {
		const roomId = (item.payload as { chat: { id: string } }).chat.id;
		const send = { ...parametersOf(polling, 'Send Auto-Reply'), roomId: byId(roomId) };
		const reply = await runAgencyInbox(sandbox, send, { inputItems: [jsonOf(proposals)[index]] });
		const room = rooms.find((candidate) => candidate.roomId === roomId)!;
		const record = sandbox.state.proposals.find((candidate) => candidate.proposal.uid === room.vendorProposal!.id)!;
		const client = room.roomUsers.find((participant) => participant.role === 'client')!.user.name!;
		expect(reply.error?.message).toBeUndefined();
		expect(jsonOf(reply)[0]).toMatchObject({ userId: record.freelancer.uid, message: expect.stringMatching(/^Thanks for writing!/) });
		expect(String(jsonOf(reply)[0].message)).not.toContain(client);
	}
	// Two requests per message: the proposal, the reply.
	expect((await takeRequests(sandbox)).map((request) => request.method)).toEqual([...rooms.map(() => 'GET'), ...rooms.map(() => 'POST')]);

	// The replies were written by agency members: the next poll finds no client message.
	expect(await trigger.poll()).toBeNull();
	expect(sandbox.state.messages.filter((sent) => sent.message.startsWith('Thanks for writing!'))).toHaveLength(rooms.length);
});

it('stops at Get Proposal, without a request, for a message in a room without a linked proposal', async () => {
	const sandbox = currentSandbox();
	const item: IDataObject = { event: 'chat.message.sent', payload: { proposal: null, message: { text: 'Hello' }, chat: { id: 'room-001' } } };
	const result = await runAgencyInbox(sandbox, parametersOf(polling, 'Get Proposal'), { inputItems: [item] });
	expect(result.error?.message).toBe('Proposal is empty');
	expect(await takeRequests(sandbox)).toEqual([]);
});
