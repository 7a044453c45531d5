/**
 * Output schemas (scripts/outputSchemas/): one for every operation and every trigger, where n8n looks
 * for them, and real outputs from the sandbox through n8n-core's engine match them.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { IDataObject, INodeParameters } from 'n8n-workflow';
import type { ZodType } from 'zod/v4';

import { AgencyInbox } from '../nodes/AgencyInbox/AgencyInbox.node';
import { AgencyInboxInvitationTrigger } from '../nodes/AgencyInboxInvitationTrigger/AgencyInboxInvitationTrigger.node';
import { AgencyInboxMessageTrigger } from '../nodes/AgencyInboxMessageTrigger/AgencyInboxMessageTrigger.node';
import { AgencyInboxProposalTrigger } from '../nodes/AgencyInboxProposalTrigger/AgencyInboxProposalTrigger.node';
import { schemaFiles } from '../scripts/outputSchemas/generate';
import { OUTPUT_SCHEMAS, simplifiedProposal } from '../scripts/outputSchemas/schemas';
import { TriggerWorkflow } from './helpers/engine';
import { byId, control, credentialFor, jsonOf, runAgencyInbox, useSandbox } from './nodes/AgencyInbox/fixtures';
import { deliver, triggerWith } from './nodes/AgencyInboxTrigger/webhookRequests';
import { proposalsOfRoom, untilProposalsRead } from './nodes/AgencyInboxMessageTrigger/roomProposalsHelpers';

const currentSandbox = useSandbox();
const actions: Record<string, ZodType> = OUTPUT_SCHEMAS.AgencyInbox;

function expectToMatch(schema: ZodType, records: IDataObject[]) {
	expect(records.length).toBeGreaterThan(0);
	for (const record of records) {
		const parsed = schema.safeParse(record);
		expect(parsed.error?.issues ?? []).toEqual([]);
	}
}

it('has a schema for every operation of the action node and for every trigger, at the paths n8n reads', () => {
	const properties = new AgencyInbox().description.properties;
	const operations = properties
		.filter((property) => property.name === 'operation')
		.flatMap((property) => (property.options as Array<{ value: string }>).map((option) => `${property.displayOptions!.show!.resource![0]}/${option.value}`));
	expect(Object.keys(OUTPUT_SCHEMAS.AgencyInbox).sort()).toEqual(operations.sort());
	const files = schemaFiles().map((file) => file.file.replace(/\\/g, '/'));
	expect(files).toEqual(expect.arrayContaining([
		'nodes/AgencyInbox/__schema__/v1.0.0/chatRoom/getAll.json',
		'nodes/AgencyInboxTrigger/__schema__/v1.0.0/output.json',
		'nodes/AgencyInboxProposalTrigger/__schema__/v1.0.0/output.json',
		'nodes/AgencyInboxMessageTrigger/__schema__/v1.0.0/output.json',
		'nodes/AgencyInboxInvitationTrigger/__schema__/v1.0.0/output.json',
	]));
	expect(files).toHaveLength(operations.length + 4);
	for (const { json } of schemaFiles()) {
		const schema = JSON.parse(json);
		// What n8n's editor needs to show fields before a run: a top-level object with properties.
		expect({ type: schema.type, hasProperties: Object.keys(schema.properties ?? {}).length > 0 }).toEqual({ type: 'object', hasProperties: true });
		expect(json).not.toContain('anyOf');
	}
});

describe('real outputs match the schemas', () => {
	const cases: Array<[string, INodeParameters]> = [
		['agency/get', { resource: 'agency', operation: 'get' }],
		['member/getAll', { resource: 'member', operation: 'getAll', returnAll: true }],
		['invitation/getAll', { resource: 'invitation', operation: 'getAll', returnAll: true }],
		['proposal/get', { resource: 'proposal', operation: 'get', proposalId: byId('prop-0004') }],
		['proposal/getAll', { resource: 'proposal', operation: 'getAll', returnAll: true }],
		['chatRoom/getAll', { resource: 'chatRoom', operation: 'getAll', returnAll: true }],
		['message/getAll', { resource: 'message', operation: 'getAll', roomId: byId('room-003'), returnAll: true }],
		['message/send', { resource: 'message', operation: 'send', roomId: byId('room-001'), freelancerUid: byId('mem-001'), message: 'Hello' }],
		['bidIntent/cancel', { resource: 'bidIntent', operation: 'cancel', bidIntentId: 'bid-001' }],
	];
	it.each(cases)('%s', async (name, parameters) => {
		const sandbox = currentSandbox();
		if (name === 'message/send') parameters.freelancerUid = byId(sandbox.state.rooms[0].vendorProposal!.userId);
		const result = await runAgencyInbox(sandbox, parameters);
		expect(result.error?.message).toBeUndefined();
		expectToMatch(actions[name], jsonOf(result));
	});

	it('proposal lists include records without a chat room and with updatedAt null, and Simplify matches its schema', async () => {
		const sandbox = currentSandbox();
		const records = jsonOf(await runAgencyInbox(sandbox, { resource: 'proposal', operation: 'getAll', returnAll: true }));
		expect(records.some((record) => (record.proposal as IDataObject).chatRoomId === null)).toBe(true);
		expect(records.some((record) => (record.proposal as IDataObject).updatedAt === null)).toBe(true);
		expectToMatch(simplifiedProposal, jsonOf(await runAgencyInbox(sandbox, { resource: 'proposal', operation: 'getAll', limit: 120, simplify: true })));
	});

	it('the proposal trigger', async () => {
		const sandbox = currentSandbox();
		const trigger = new TriggerWorkflow({
			type: 'agencyInboxProposalTrigger',
			nodeType: new AgencyInboxProposalTrigger(),
			parameters: { simplify: false },
			credentials: { agencyInboxApi: credentialFor(sandbox) },
		});
		expect(await trigger.poll()).toBeNull();
		for (const kind of ['clientReply', 'hire', 'newProposal']) await control(sandbox, 'POST', 'changes', { kind });
		const fired = (await trigger.poll())?.[0] ?? [];
		expect(fired).toHaveLength(3);
		expectToMatch(OUTPUT_SCHEMAS.AgencyInboxProposalTrigger.output, fired.map((item) => item.json));
	});

	it('the message trigger, and its Fetch Test Event', async () => {
		const sandbox = currentSandbox();
		const trigger = new TriggerWorkflow({
			type: 'agencyInboxMessageTrigger',
			nodeType: new AgencyInboxMessageTrigger(),
			parameters: {},
			credentials: { agencyInboxApi: credentialFor(sandbox) },
		});
		const [first, second] = sandbox.state.rooms;
		// A room that names a proposal, but no proposal has it as its chat room: payload.proposal is null, with a notice.
		for (const record of sandbox.state.proposals) if (record.proposal.chatRoomId === second.roomId) record.proposal.chatRoomId = null;
		expect(await trigger.poll()).toBeNull();
		await untilProposalsRead(trigger);
		await control(sandbox, 'POST', 'changes', { kind: 'clientMessage', roomId: first.roomId, text: 'Can you start Monday?' });
		await control(sandbox, 'POST', 'changes', { kind: 'clientMessage', roomId: second.roomId, text: 'Please send an estimate.' });
		await control(sandbox, 'POST', 'changes', { kind: 'clientMessage', roomId: second.roomId, text: 'And your availability.' });
		const fired = (await trigger.poll())?.[0] ?? [];
		expect(fired.map((item) => (item.json.payload as IDataObject).proposal)).toEqual([{ uid: proposalsOfRoom(sandbox.state, first.roomId)[0].uid }, null, null]);
		expect(fired.map((item) => item.json.notice === undefined)).toEqual([true, false, false]);
		expectToMatch(OUTPUT_SCHEMAS.AgencyInboxMessageTrigger.output, fired.map((item) => item.json));
		const sample = (await trigger.poll('manual'))?.[0] ?? [];
		expect(sample).toHaveLength(1);
		expectToMatch(OUTPUT_SCHEMAS.AgencyInboxMessageTrigger.output, sample.map((item) => item.json));
		// The newest client message of the first page of rooms, without reading a proposal.
		const picked = sample[0].json as { message: { text: string; attachments: unknown[] }; payload: { proposal: unknown }; room: { proposals: unknown } };
		expect({ text: picked.message.text, attachments: picked.message.attachments, proposal: picked.payload.proposal, proposals: picked.room.proposals }).toEqual({
			text: 'And your availability.',
			attachments: [],
			proposal: null,
			proposals: null,
		});
	});

	const invitationTrigger = (sandbox: ReturnType<typeof currentSandbox>, triggerOn: string) =>
		new TriggerWorkflow({
			type: 'agencyInboxInvitationTrigger',
			nodeType: new AgencyInboxInvitationTrigger(),
			parameters: { triggerOn },
			credentials: { agencyInboxApi: credentialFor(sandbox) },
		});

	it('the invitation trigger, for a new invitation and its Fetch Test Event', async () => {
		const sandbox = currentSandbox();
		const trigger = invitationTrigger(sandbox, 'new');
		expect(await trigger.poll()).toBeNull();
		// The sandbox's change kind newInvitation (a new invitation to a job, listed from the next request on).
		expect(await control(sandbox, 'POST', 'changes', { kind: 'newInvitation' })).toHaveProperty('data');
		const fired = (await trigger.poll())?.[0] ?? [];
		expect(fired.map((item) => item.json.trigger)).toEqual(['new']);
		expectToMatch(OUTPUT_SCHEMAS.AgencyInboxInvitationTrigger.output, fired.map((item) => item.json));
		const sample = ((await trigger.poll('manual'))?.[0] ?? []).map((item) => item.json);
		expectToMatch(OUTPUT_SCHEMAS.AgencyInboxInvitationTrigger.output, sample);
		// The newest invitation of the first page: the one just made.
		expect(sample.map((json) => (json.invite as IDataObject).uid)).toEqual([(fired[0].json.invite as IDataObject).uid]);
	});

	it('the invitation trigger, for a status change', async () => {
		const sandbox = currentSandbox();
		const trigger = invitationTrigger(sandbox, 'statusChanged');
		expect(await trigger.poll()).toBeNull();
		const pending = sandbox.state.invitations.find((record) => record.invite.status === 'PENDING')!;
		Object.assign(pending.invite, { status: 'ACCEPTED', result: 'ACCEPTED' });
		const fired = (await trigger.poll())?.[0] ?? [];
		expect(fired.map((item) => [item.json.trigger, item.json.previousStatus, item.json.previousResult])).toEqual([['statusChanged', 'PENDING', '']]);
		expectToMatch(OUTPUT_SCHEMAS.AgencyInboxInvitationTrigger.output, fired.map((item) => item.json));
	});

	it('the webhook trigger, for each event the sandbox sends', async () => {
		const sandbox = currentSandbox();
		const received: Array<{ body: Buffer; headers: Record<string, string> }> = [];
		const server = createServer((request, response) => {
			const chunks: Buffer[] = [];
			request.on('data', (chunk: Buffer) => chunks.push(chunk));
			request.on('end', () => {
				received.push({ body: Buffer.concat(chunks), headers: request.headers as Record<string, string> });
				response.end('ok');
			});
		});
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		try {
			const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
			const { secret } = await control<{ secret: string }>(sandbox, 'POST', 'webhook-endpoints', { url });
			const types = ['proposal.accepted', 'chat.message.sent', 'bid_intent.scheduled', 'message.attempt.exhausted'];
			for (const type of types) await control(sandbox, 'POST', 'events', { type });
			for (let waited = 0; received.length < types.length && waited < 5000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
			const trigger = triggerWith({}, { baseUrl: sandbox.url, apiKey: sandbox.apiKey, webhookSigningSecret: secret ?? sandbox.signingSecret });
			const items: IDataObject[] = [];
			for (const delivery of received) items.push(...((await deliver(trigger, delivery)).items ?? []));
			expect(items.map((item) => item.event).sort()).toEqual([...types].sort());
			expectToMatch(OUTPUT_SCHEMAS.AgencyInboxTrigger.output, items);
		} finally {
			server.closeAllConnections();
			await new Promise((resolve) => server.close(resolve));
		}
	});
});
