/**
 * The chat auto-reply sample (workflows/chat-auto-reply.json) as saved, through n8n-core's engine,
 * under every reading of what the spec leaves open: the sandbox's own signed chat.message.sent
 * delivery reaches the sample's webhook trigger, and the run goes on through Get Proposal and Send
 * Auto-Reply with their saved expressions. It relies only on what the spec guarantees: the event's
 * proposal.uid and chat.id, and the proposal's freelancer.uid. That a repeated delivery starts no
 * second run is the trigger's own test; the run in a real n8n is the end-to-end tests' part.
 */
import { SINGLE_READINGS } from '../../sandbox';
import { SAMPLE_SANDBOX_ORIGIN } from '../../scripts/n8n/agencyInbox';
import type { ChatRoom, SentMessage } from '../../sandbox/types';
import { nodeOutput } from '../helpers/engine';
import { control, takeRequests } from '../nodes/AgencyInbox/fixtures';
import { loadSample, nodeOf, runSample, sampleWebhookTrigger, triggerItems, useSampleSandbox } from './sampleRuns';

const SAMPLE_ID = 'aiSampleChatFlw1';
const REPLY_OPENING = 'Thanks for your message!';

it('has no step that reads rooms and sends as the proposal of the event', async () => {
	const sample = await loadSample(SAMPLE_SANDBOX_ORIGIN, SAMPLE_ID);
	const steps = sample.nodes.filter((node) => node.type !== 'n8n-nodes-base.stickyNote');
	expect(steps.map((node) => node.name)).toEqual(['Client Message', 'Get Proposal', 'Send Auto-Reply']);
	expect(nodeOf(sample, 'Send Auto-Reply').parameters).toMatchObject({
		roomId: { __rl: true, mode: 'id', value: "={{ $('Client Message').item.json.payload.chat.id }}" },
		freelancerUid: { value: '={{ $json.freelancer.uid }}' },
	});
});

describe.each(SINGLE_READINGS.map(({ label, variants }) => [label, variants] as const))('under reading %s', (_label, variants) => {
	const setup = useSampleSandbox(SAMPLE_ID, variants, { webhooks: true });

	it("answers each client message once, as the proposal's freelancer whoever owns the room, with two requests and without the client's name", async () => {
		const { sandbox, sample, inbox } = setup;
		// The sandbox varies what the spec leaves open: rooms owned by the client, by nobody, by another member; and a room a new client opens.
		const ownedBy = (role: string | null) => sandbox.state.rooms.find((room) => room.vendorProposal !== null && (room.owner?.role ?? null) === role)!;
		const seeded = [ownedBy('client'), ownedBy(null), ownedBy('freelancer')];
		const trigger = sampleWebhookTrigger(sample, 'Client Message', sandbox);
		for (const target of [...seeded.map((room) => ({ roomId: room.roomId })), { newRoom: true }]) {
			const { roomId } = (await control(sandbox, 'POST', 'changes', { kind: 'clientMessage', text: 'Hi there', ...target })).data as { roomId: string };
			const room = sandbox.state.rooms.find((candidate) => candidate.roomId === roomId) as ChatRoom;
			const items = await triggerItems(trigger, await inbox.next());
			expect(items).toHaveLength(1);
			const event = items![0].json as { payload: { proposal: { uid: string }; chat: { id: string } } };
			expect(event.payload.chat.id).toBe(roomId);
			const record = sandbox.state.proposals.find((candidate) => candidate.proposal.uid === event.payload.proposal.uid)!;
			expect(record.proposal.chatRoomId).toBe(roomId);

			const run = await runSample(sample, sandbox, { node: 'Client Message', items: items! });
			expect({ room: roomId, error: run.data.resultData.error?.message }).toEqual({ room: roomId, error: undefined });
			expect(nodeOutput(run, 'Send Auto-Reply')).toEqual([expect.objectContaining({ message: expect.stringMatching(new RegExp(`^${REPLY_OPENING}`)) })]);
			const client = room.roomUsers.find((participant) => participant.role === 'client')!.user.name!;
			const sent = (await control<{ data: SentMessage[] }>(sandbox, 'GET', 'messages')).data.filter((message) => message.roomId === roomId);
			expect(sent.map(({ freelancerUid, message }) => ({ freelancerUid, signedByClient: message.includes(client) }))).toEqual([{ freelancerUid: record.freelancer.uid, signedByClient: false }]);
			expect((await takeRequests(sandbox)).map((request) => `${request.method} ${request.path}`)).toEqual([
				`GET /v1/agency/proposals/${record.proposal.uid}`,
				`POST /v1/master-inbox/rooms/${roomId}/stories`,
			]);
		}
	});
});
