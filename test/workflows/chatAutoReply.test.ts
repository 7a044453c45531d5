/**
 * The chat auto-reply sample against the varied sandbox, through n8n-core's engine: its Get Proposal
 * and Send Auto-Reply nodes as saved in workflows/chat-auto-reply.json (the Room of Send is the event's
 * chat.id, which the real n8n end-to-end test covers as written). It relies only on what the spec
 * guarantees: the event's proposal.uid and chat.id, and the proposal's freelancer.uid.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import type { INodeParameters } from 'n8n-workflow';

import { byId, jsonOf, runAgencyInbox, takeRequests, useSandbox } from '../nodes/AgencyInbox/fixtures';

const sample = JSON.parse(fs.readFileSync(path.join(__dirname, '../../workflows/chat-auto-reply.json'), 'utf8')) as {
	nodes: Array<{ name: string; type: string; parameters: INodeParameters }>;
};
const parametersOf = (name: string) => sample.nodes.find((node) => node.name === name)!.parameters;

const currentSandbox = useSandbox();

it('has no step that reads rooms and sends as the proposal of the event', () => {
	const steps = sample.nodes.filter((node) => node.type !== 'n8n-nodes-base.stickyNote');
	expect(steps.map((node) => node.name)).toEqual(['Client Message', 'Get Proposal', 'Send Auto-Reply']);
	expect(parametersOf('Send Auto-Reply').roomId).toEqual({ __rl: true, mode: 'id', value: "={{ $('Client Message').item.json.payload.chat.id }}" });
});

it("replies as the proposal's freelancer whoever owns the room, with two requests and without the client's name", async () => {
	const sandbox = currentSandbox();
	const rooms = sandbox.state.rooms.filter((room) => room.vendorProposal !== null);
	// The sandbox varies what the spec leaves open: rooms owned by the client, by nobody, by another member.
	expect(new Set(rooms.map((room) => room.owner?.role ?? null))).toEqual(new Set(['client', null, 'freelancer']));
	for (const room of rooms.slice(0, 12)) {
		const event = { event: 'chat.message.sent', deliveryId: `msg_${room.roomId}`, payload: { proposal: { uid: room.vendorProposal!.id }, message: { text: 'Hi there' }, chat: { id: room.roomId } } };
		const proposal = await runAgencyInbox(sandbox, parametersOf('Get Proposal'), { inputItems: [event] });
		const send = { ...parametersOf('Send Auto-Reply'), roomId: byId(event.payload.chat.id) };
		const reply = await runAgencyInbox(sandbox, send, { inputItems: jsonOf(proposal) });
		const record = sandbox.state.proposals.find((candidate) => candidate.proposal.uid === event.payload.proposal.uid)!;
		const client = room.roomUsers.find((participant) => participant.role === 'client')!.user.name!;
		expect({ room: room.roomId, error: reply.error?.message }).toEqual({ room: room.roomId, error: undefined });
		expect(jsonOf(reply)[0]).toMatchObject({ userId: record.freelancer.uid, message: expect.stringMatching(/^Thanks for your message!/) });
		expect(String(jsonOf(reply)[0].message)).not.toContain(client);
		expect((await takeRequests(sandbox)).map((request) => `${request.method} ${request.path}`)).toEqual([
			`GET /v1/agency/proposals/${record.proposal.uid}`,
			`POST /v1/master-inbox/rooms/${room.roomId}/stories`,
		]);
	}
});
