/** Changes to the data that control endpoints and the simulator apply: client activity, new proposals and bids. */
import { BadRequest } from './http';
import { appendStory } from './routes';
import { buildBidIntent, buildProposal, memberAsUser } from './seed';
import type { SandboxCore } from './core';
import type { BidIntent, ChatRoom, ProposalRecord, ResultType, Story } from './types';

export const CHANGE_KINDS = ['clientReply', 'viewed', 'hire', 'status', 'newProposal', 'clientMessage', 'scheduleBid', 'masterInbox'] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

const CLIENT_TEXTS = ['Could we schedule a call this week?', 'Thanks! Can you send an estimate?', 'We reviewed your proposal and have a few questions.', 'Please share your availability.', 'Looks great, let us proceed.'];

function stringField(body: Record<string, unknown>, name: string): string | undefined {
	const value = body[name];
	if (value === undefined || value === null) return undefined;
	if (typeof value !== 'string') throw new BadRequest(`${name} must be a string.`);
	return value;
}

function findProposal(core: SandboxCore, uid: string): ProposalRecord {
	const record = core.state.proposals.find((p) => p.proposal.uid === uid);
	if (!record) throw new BadRequest(`Unknown proposal "${uid}".`);
	return record;
}

function pickProposal(core: SandboxCore, body: Record<string, unknown>, eligible: (p: ProposalRecord) => boolean = () => true): ProposalRecord {
	const uid = stringField(body, 'proposalUid');
	if (uid !== undefined) return findProposal(core, uid);
	const candidates = core.state.proposals.filter(eligible);
	return core.rng.pick(candidates.length > 0 ? candidates : core.state.proposals);
}

/** The change time: strictly after every earlier one, or equal to another proposal's updatedAt when asked. */
function changeTime(core: SandboxCore, body: Record<string, unknown>): string {
	const sameAs = stringField(body, 'sameTimestampAs');
	if (sameAs === undefined) return core.clock.nowIso();
	const other = findProposal(core, sameAs).proposal.updatedAt;
	if (other === null) throw new BadRequest(`Proposal "${sameAs}" has no updatedAt to share.`);
	return other;
}

function clientOf(room: ChatRoom) {
	return (room.roomUsers.find((p) => p.role === 'client') ?? room.roomUsers[0]).user;
}

function findRoom(core: SandboxCore, roomId: string): ChatRoom {
	const room = core.state.rooms.find((r) => r.roomId === roomId);
	if (!room) throw new BadRequest(`Unknown room "${roomId}".`);
	return room;
}

function appendResult(core: SandboxCore, body: Record<string, unknown>, type: ResultType, eligible?: (p: ProposalRecord) => boolean): ProposalRecord {
	const record = pickProposal(core, body, eligible);
	const at = changeTime(core, body);
	record.proposal.results.push({ timeStamp: at, type });
	record.proposal.updatedAt = at;
	if (type === 'HIRED') record.proposal.status = 'ACTIVE';
	if (type === 'CLIENT_REPLIED' && record.proposal.chatRoomId !== null) {
		const room = findRoom(core, record.proposal.chatRoomId);
		appendStory(core.state, room, clientOf(room), core.rng.pick(CLIENT_TEXTS), core.clock.nowIso());
	}
	return record;
}

const hasResult = (type: ResultType) => (p: ProposalRecord) => p.proposal.results.some((r) => r.type === type);

function setStatus(core: SandboxCore, body: Record<string, unknown>): ProposalRecord {
	const uid = stringField(body, 'proposalUid');
	const status = stringField(body, 'status');
	if (uid === undefined || status === undefined || status.trim() === '') throw new BadRequest('status change needs proposalUid and status.');
	const record = findProposal(core, uid);
	record.proposal.status = status.toUpperCase();
	record.proposal.updatedAt = changeTime(core, body);
	return record;
}

function newProposal(core: SandboxCore): ProposalRecord {
	const { state, rng } = core;
	const nowMs = Date.parse(core.clock.nowIso());
	const number = ++state.counters.proposal;
	const room = state.rooms[(number - 1) % state.rooms.length];
	const managers = state.members.filter((m) => m.role === 'business_manager');
	const authorized = state.members.filter((m) => !state.unauthorizedFreelancers.includes(m.uid));
	const freelancer = authorized[number % authorized.length];
	const record = buildProposal(rng, {
		number,
		createdMs: nowMs,
		updatedMs: nowMs,
		results: [],
		status: 'SUBMITTED',
		freelancer,
		manager: managers[number % managers.length],
		room: { roomId: room.roomId, topic: room.topic, client: { organization: { id: room.organization?.id ?? `org-${number}` }, country: rng.int(0, 9) } },
	});
	state.proposals.push(record);
	// The proposal's freelancer takes part in its room, as the seeded ones do.
	if (!room.roomUsers.some((p) => p.user.id === freelancer.uid)) {
		room.roomUsers.push({ user: memberAsUser(freelancer), organization: room.roomUsers.find((p) => p.role === 'freelancer')?.organization ?? null, role: 'freelancer' });
		room.numUsers = room.roomUsers.length;
	}
	return record;
}

/** A message from the room's client; fires chat.message.sent. */
function clientMessage(core: SandboxCore, body: Record<string, unknown>): Story & { roomId: string } {
	const roomId = stringField(body, 'roomId');
	const room = roomId !== undefined ? findRoom(core, roomId) : core.rng.pick(core.state.rooms.filter((r) => r.vendorProposal !== null));
	const text = stringField(body, 'text') ?? core.rng.pick(CLIENT_TEXTS);
	const story = appendStory(core.state, room, clientOf(room), text, core.clock.nowIso());
	core.webhooks.fire('chat.message.sent', chatMessagePayload(core, room, text));
	return { ...story, roomId: room.roomId };
}

export function chatMessagePayload(core: SandboxCore, room: ChatRoom, text: string) {
	const proposalUid = room.vendorProposal?.id ?? core.state.proposals.find((p) => p.proposal.chatRoomId === room.roomId)?.proposal.uid ?? '';
	return { proposal: { uid: proposalUid }, message: { text }, chat: { id: room.roomId } };
}

/** A new scheduled bid intent; fires bid_intent.scheduled. */
function scheduleBid(core: SandboxCore): BidIntent {
	const { state } = core;
	const intent = buildBidIntent(core.rng, ++state.counters.bidIntent, 'scheduled', Date.parse(core.clock.nowIso()), state.members);
	state.bidIntents.push(intent);
	core.webhooks.fire('bid_intent.scheduled', { jobUid: intent.jobUid, bidId: intent.id });
	return intent;
}

export function applyChange(core: SandboxCore, body: Record<string, unknown>): unknown {
	const kind = body.kind as ChangeKind;
	switch (kind) {
		case 'clientReply':
			return appendResult(core, body, 'CLIENT_REPLIED');
		case 'viewed':
			return appendResult(core, body, 'VIEWED_BY_CLIENT', (p) => !hasResult('VIEWED_BY_CLIENT')(p));
		case 'hire':
			return appendResult(core, body, 'HIRED', (p) => !hasResult('HIRED')(p));
		case 'status':
			return setStatus(core, body);
		case 'newProposal':
			return newProposal(core);
		case 'clientMessage':
			return clientMessage(core, body);
		case 'scheduleBid':
			return scheduleBid(core);
		case 'masterInbox':
			if (typeof body.active !== 'boolean') throw new BadRequest('masterInbox change needs {active: boolean}.');
			core.state.masterInboxActive = body.active;
			return { active: body.active };
		default:
			throw new BadRequest(`Unknown change kind "${String(body.kind)}"; use one of ${CHANGE_KINDS.join(', ')}.`);
	}
}

/** A plausible payload for an event type, built from the seeded data. */
export function defaultEventData(core: SandboxCore, type: string): unknown {
	const { state } = core;
	switch (type) {
		case 'proposal.accepted': {
			const record = state.proposals.find(hasResult('HIRED')) ?? state.proposals[0];
			const person = (uid: string, name: string) => ({ uid, name, photoUrl: `https://example.invalid/photos/${uid}.png`, slug: uid });
			return {
				proposal: { uid: record.proposal.uid, coverLetter: record.proposal.coverLetter, status: record.proposal.status, createdAt: record.proposal.createdAt },
				job: { slug: record.job.uid, title: record.job.title, description: record.job.description, createdAt: record.job.createdAt },
				freelancer: person(record.freelancer.uid, record.freelancer.name),
				manager: person(record.manager.uid, record.manager.name),
				chat: { id: record.proposal.chatRoomId },
			};
		}
		case 'chat.message.sent': {
			const room = state.rooms[0];
			return chatMessagePayload(core, room, room.lastStory?.message ?? 'Hello!');
		}
		case 'bid_intent.scheduled': {
			const intent = state.bidIntents.find((b) => b.status === 'scheduled') ?? state.bidIntents[0];
			return { jobUid: intent.jobUid, bidId: intent.id };
		}
		case 'message.attempt.exhausted':
			return { msgId: 'msg_000000_example', eventType: 'chat.message.sent', endpointId: 'ep-001', attempts: 7, lastAttempt: { timestamp: new Date().toISOString(), status: 500 } };
		default:
			return {};
	}
}
