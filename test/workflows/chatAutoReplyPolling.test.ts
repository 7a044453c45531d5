/**
 * The polling variant of the chat auto-reply (workflows/chat-auto-reply-polling.json): the Agency
 * Inbox Message Trigger, its check "Not an Auto-Reply" (an n8n IF node, restated here: the engine
 * tests run our nodes only) and Send Auto-Reply, run through n8n-core's engine against the sandbox
 * under every reading of what the spec leaves open. Its run in a real n8n is the end-to-end tests' part.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { AgencyInboxMessageTrigger } from '../../nodes/AgencyInboxMessageTrigger/AgencyInboxMessageTrigger.node';
import { resetProcessMemory } from '../../nodes/shared/processMemory';
import { SINGLE_READINGS, marketplaceUserIdOf } from '../../sandbox';
import { NODE_TYPES, SAMPLE_SANDBOX_ORIGIN, WORKFLOWS_DIR, loadSampleWorkflows, pollEverySeconds, type WorkflowNode } from '../../scripts/n8n/agencyInbox';
import { TriggerWorkflow } from '../helpers/engine';
import { control, credentialFor, jsonOf, runAgencyInbox, takeRequests, useSandbox } from '../nodes/AgencyInbox/fixtures';

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

/** The first words of the reply, which the check compares each message with. */
const REPLY_OPENING = 'Thanks for writing!';

interface GuardCondition {
	leftValue: string;
	rightValue: string;
	operator: { operation: string };
}
const guardConditions = () => (parametersOf(polling, 'Not an Auto-Reply').conditions as unknown as { conditions: GuardCondition[]; combinator: string });

/** "Not an Auto-Reply" as saved: someone to reply as, and not this workflow's own reply. */
const passesGuard = (item: IDataObject) => {
	const room = item.room as { replyAs: { uid: string } | null };
	return !!room.replyAs?.uid && !String((item.message as { text: string }).text).startsWith(REPLY_OPENING);
};

const currentSandbox = useSandbox();

describe('as saved', () => {
	it('is the Message Trigger, a check that lets no auto-reply through, and the reply as the room\'s agency member, without a proposal lookup', () => {
		expect(steps(polling).map((node) => [node.name, node.type])).toEqual([
			['Client Message', NODE_TYPES.messageTrigger],
			['Not an Auto-Reply', 'n8n-nodes-base.if'],
			['Send Auto-Reply', NODE_TYPES.action],
		]);
		const { combinator, conditions } = guardConditions();
		expect(combinator).toBe('and');
		expect(conditions.map(({ leftValue, rightValue, operator }) => [leftValue, rightValue, operator.operation])).toEqual([
			["={{ $json.room.replyAs?.uid ?? '' }}", '', 'notEmpty'],
			['={{ $json.message.text }}', REPLY_OPENING, 'notStartsWith'],
		]);
		const send = parametersOf(polling, 'Send Auto-Reply');
		expect(send).toMatchObject({
			resource: 'message',
			operation: 'send',
			roomId: { value: '={{ $json.payload.chat.id }}' },
			freelancerUid: { value: '={{ $json.room.replyAs.uid }}' },
		});
		// The end-to-end tests count each sample's replies by how they begin.
		expect(String(send.message)).toMatch(new RegExp(`^=${REPLY_OPENING}`));
		expect(String(parametersOf(webhook, 'Send Auto-Reply').message)).toMatch(/^=Thanks for your message!/);
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

describe.each(SINGLE_READINGS.map(({ label, variants }) => [label, variants] as const))('under reading %s', (_label, variants) => {
	beforeEach(async () => {
		resetProcessMemory();
		await control(currentSandbox(), 'POST', 'variants', variants);
	});

	it('answers each new client message once, as an agency member taking part in the room, and its own replies start no run', async () => {
		const sandbox = currentSandbox();
		const trigger = new TriggerWorkflow({
			type: 'agencyInboxMessageTrigger',
			nodeType: new AgencyInboxMessageTrigger(),
			parameters: parametersOf(polling, 'Client Message'),
			credentials: { agencyInboxApi: credentialFor(sandbox) },
		});
		expect(await trigger.poll()).toBeNull(); // activation: the starting point, nothing historic
		// Rooms with and without a proposal of their own, and one with a member who may not send.
		const rooms = [sandbox.state.rooms[0], sandbox.state.rooms[2], ...sandbox.state.rooms.filter((room) => room.vendorProposal === null).slice(0, 1)];
		for (const room of rooms) await control(sandbox, 'POST', 'changes', { kind: 'clientMessage', roomId: room.roomId, text: `Question about ${room.topic}` });
		const items = ((await trigger.poll())?.[0] ?? []).map((item) => item.json);
		expect(items.map((item) => (item.payload as { chat: { id: string } }).chat.id)).toEqual(rooms.map((room) => room.roomId));
		expect(items.every(passesGuard)).toBe(true);

		await takeRequests(sandbox);
		for (const [index, item] of items.entries()) {
			const reply = await runAgencyInbox(sandbox, parametersOf(polling, 'Send Auto-Reply'), { inputItems: [item] });
			expect(reply.error?.message).toBeUndefined();
			const replyAs = (item.room as { replyAs: { uid: string; name: string } }).replyAs;
			const takesPart = rooms[index].roomUsers.some((participant) => participant.user.id === replyAs.uid);
			expect(takesPart).toBe(true);
			const authorId = variants.authorIds === 'marketplaceUserId' ? marketplaceUserIdOf(replyAs.uid) : replyAs.uid;
			expect(jsonOf(reply)[0]).toMatchObject({ userId: authorId, message: `${REPLY_OPENING} I have seen your message and will get back to you shortly.\n${replyAs.name}` });
		}
		// One request per reply: no proposal lookup in the workflow.
		expect((await takeRequests(sandbox)).map((request) => request.method)).toEqual(rooms.map(() => 'POST'));

		// The replies were written by agency members, whatever ids the service gives them: nothing to answer.
		expect(await trigger.poll()).toBeNull();
		expect(sandbox.state.messages.filter((sent) => sent.message.startsWith(REPLY_OPENING))).toHaveLength(rooms.length);
	});
});
