/** Changes to the data that control endpoints and the simulator apply: client and agency activity, new proposals, bids and invitations. */
import { BadRequest } from './http';
import { idView } from './marketplaceIds';
import { appendStory } from './routes';
import { resyncRooms, stalestRooms } from './roomSync';
import {
	buildBidIntent,
	buildInvitation,
	buildNewRoom,
	buildProposal,
	INVITATION_STATES,
	inviteOutcome,
	MEMBER_LINES,
	memberAsUser,
	memberParticipant,
	vendorProposalOf,
	type InvitationState,
} from './seed';
import type { SandboxCore } from './core';
import type { BidIntent, ChatRoom, InvitationRecord, Member, ProposalRecord, ResultType, Story } from './types';

export const CHANGE_KINDS = [
	'clientReply',
	'viewed',
	'hire',
	'status',
	'newProposal',
	'relinkProposal',
	'clientMessage',
	'agencyMessage',
	'scheduleBid',
	'masterInbox',
	'newInvitation',
	'invitationStatus',
	'lateClientMessage',
	'roomResync',
	'recentHistory',
] as const;
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

/** Makes the member take part in the room, as a proposal's freelancer takes part in its room. */
function joinRoom(room: ChatRoom, member: Member): void {
	if (room.roomUsers.some((p) => p.user.id === member.uid)) return;
	room.roomUsers.push(memberParticipant(member));
	room.numUsers = room.roomUsers.length;
}

/** A new proposal in `target` (by default the rooms take turns); its freelancer takes part in that room. */
function newProposal(core: SandboxCore, target?: ChatRoom): ProposalRecord {
	const { state, rng } = core;
	const nowMs = Date.parse(core.clock.nowIso());
	const number = ++state.counters.proposal;
	const room = target ?? state.rooms[(number - 1) % state.rooms.length];
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
	joinRoom(room, freelancer);
	return record;
}

/**
 * A proposal linked to another chat room (`roomId`), or to none (`roomId: null`): a change, so its
 * updatedAt moves. The room that named it keeps its vendorProposal, as the service may.
 */
function relinkProposal(core: SandboxCore, body: Record<string, unknown>): ProposalRecord {
	const uid = stringField(body, 'proposalUid');
	if (uid === undefined || !('roomId' in body)) throw new BadRequest('relinkProposal needs proposalUid and roomId (a room id, or null for none).');
	const roomId = stringField(body, 'roomId') ?? null;
	const record = findProposal(core, uid);
	if (roomId !== null) {
		const member = core.state.members.find((m) => m.uid === record.freelancer.uid);
		if (member) joinRoom(findRoom(core, roomId), member);
	}
	record.proposal.chatRoomId = roomId;
	record.proposal.updatedAt = changeTime(core, body);
	return record;
}

const MAX_MESSAGES_PER_CHANGE = 50;

function messageCount(body: Record<string, unknown>): number {
	const { count = 1 } = body;
	if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > MAX_MESSAGES_PER_CHANGE) {
		throw new BadRequest(`count must be an integer from 1 to ${MAX_MESSAGES_PER_CHANGE}.`);
	}
	return count;
}

/** A room that a new client opens for a new proposal of the agency, so chat.message.sent still names a proposal. */
function openRoom(core: SandboxCore): ChatRoom {
	const { state } = core;
	const room = buildNewRoom(core.rng, ++state.counters.room, ++state.counters.client, core.clock.nowMs());
	state.rooms.push(room);
	state.stories[room.roomId] = [];
	room.vendorProposal = vendorProposalOf(newProposal(core, room));
	return room;
}

function clientMessageRoom(core: SandboxCore, body: Record<string, unknown>): ChatRoom {
	const roomId = stringField(body, 'roomId');
	if (body.newRoom !== undefined && typeof body.newRoom !== 'boolean') throw new BadRequest('newRoom must be a boolean.');
	if (body.newRoom !== true) return roomId !== undefined ? findRoom(core, roomId) : core.rng.pick(core.state.rooms.filter((r) => r.vendorProposal !== null));
	if (roomId !== undefined) throw new BadRequest('Give roomId or newRoom, not both.');
	return openRoom(core);
}

/**
 * `count` messages from the room's client (default 1), each its own story with a later createdAt and
 * its own chat.message.sent. One message answers with the story as before; several with all of them,
 * the last one's storyId and createdAt staying on top for callers that read those.
 */
function clientMessage(core: SandboxCore, body: Record<string, unknown>) {
	const count = messageCount(body);
	const text = stringField(body, 'text');
	const room = clientMessageRoom(core, body);
	const stories = Array.from({ length: count }, () => {
		const message = text ?? core.rng.pick(CLIENT_TEXTS);
		const story = appendStory(core.state, room, clientOf(room), message, core.clock.nowIso());
		core.webhooks.fire('chat.message.sent', chatMessagePayload(core, room, message));
		return story;
	});
	const last = stories[stories.length - 1];
	return count === 1 ? { ...last, roomId: room.roomId } : { roomId: room.roomId, storyId: last.storyId, createdAt: last.createdAt, stories };
}

const DEFAULT_LATENESS_MS = 60_000;

function positiveInteger(body: Record<string, unknown>, name: string): number | undefined {
	const value = body[name];
	if (value === undefined) return undefined;
	if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) throw new BadRequest(`${name} must be a positive integer.`);
	return value;
}

/** When a late message was written: at `createdAt`, `beforeLastByMs` before the room's last message, or `lateByMs` before `syncedAt`. */
function lateWrittenAt(room: ChatRoom, body: Record<string, unknown>, syncedAt: string): number {
	const lateByMs = positiveInteger(body, 'lateByMs') ?? DEFAULT_LATENESS_MS;
	const beforeLastByMs = positiveInteger(body, 'beforeLastByMs');
	const createdAt = stringField(body, 'createdAt');
	if (createdAt !== undefined && Number.isNaN(Date.parse(createdAt))) throw new BadRequest('createdAt must be an ISO-8601 date-time.');
	if (createdAt !== undefined && beforeLastByMs !== undefined) throw new BadRequest('Give createdAt or beforeLastByMs, not both.');
	if (beforeLastByMs !== undefined && room.lastStoryAt === null) throw new BadRequest(`Room "${room.roomId}" has no message to be behind.`);
	const at = createdAt ?? (beforeLastByMs === undefined ? undefined : new Date(Date.parse(room.lastStoryAt!) - beforeLastByMs).toISOString());
	return at === undefined ? Date.parse(syncedAt) - lateByMs : Math.min(Date.parse(at), Date.parse(syncedAt) - 1);
}

/**
 * A client message the service syncs now although it was written earlier: at `createdAt`,
 * `beforeLastByMs` before the room's last message (a late sync behind a reply the trigger may have
 * read), or `lateByMs` ago (default a minute). Its createdAt is that earlier time; as a synchronising
 * service does, the room's lastSyncedAt moves to now and its storiesCount counts it; it is the room's
 * lastStory unless the room holds a newer message. Fires chat.message.sent as any client message.
 */
function lateClientMessage(core: SandboxCore, body: Record<string, unknown>) {
	const room = clientMessageRoom(core, body);
	const message = stringField(body, 'text') ?? core.rng.pick(CLIENT_TEXTS);
	const syncedAt = core.clock.nowIso();
	const writtenAt = lateWrittenAt(room, body, syncedAt);
	const story = appendStory(core.state, room, clientOf(room), message, new Date(writtenAt).toISOString(), syncedAt);
	core.webhooks.fire('chat.message.sent', chatMessagePayload(core, room, message));
	return { ...story, roomId: room.roomId };
}

/**
 * A background re-sync of rooms with nothing new in them, all at one moment: `roomIds`, or the `count`
 * rooms synced longest ago (default 1). Answers the rooms and the new lastSyncedAt.
 */
function roomResync(core: SandboxCore, body: Record<string, unknown>) {
	const { roomIds, count = 1 } = body;
	if (roomIds !== undefined && (!Array.isArray(roomIds) || !roomIds.every((id) => typeof id === 'string'))) throw new BadRequest('roomIds must be an array of room ids.');
	if (typeof count !== 'number' || !Number.isInteger(count) || count < 1) throw new BadRequest('count must be a positive integer.');
	const rooms = roomIds === undefined ? stalestRooms(core.state, count) : (roomIds as string[]).map((roomId) => findRoom(core, roomId));
	const at = core.clock.nowIso();
	resyncRooms(rooms, at);
	return { roomIds: rooms.map((room) => room.roomId), lastSyncedAt: at };
}

/** Most messages one recentHistory change writes. */
const MAX_HISTORY_MESSAGES = 20_000;

/**
 * A recent history, as an inbox synced long ago holds it: `messages` messages (default 100) written
 * over the last `days` days (default 30) up to a second ago, in the first `rooms` rooms (default all),
 * every other one a client's (at random, seeded), each synced when it was written; `invitations`
 * invitations (default 0) created in the same days; `proposals` proposals (default 0) viewed by their
 * client in them. No webhook: this is the past. Answers how many client messages it wrote and between
 * which times.
 */
function recentHistory(core: SandboxCore, body: Record<string, unknown>) {
	const count = positiveInteger(body, 'messages') ?? 100;
	if (count > MAX_HISTORY_MESSAGES) throw new BadRequest(`messages must be at most ${MAX_HISTORY_MESSAGES}.`);
	const days = positiveInteger(body, 'days') ?? 30;
	const rooms = core.state.rooms.slice(0, positiveInteger(body, 'rooms') ?? core.state.rooms.length).filter((room) => membersIn(core, room).length > 0);
	if (rooms.length === 0) throw new BadRequest('No room with an agency member to write in.');
	const endMs = core.clock.peekMs() - 1000;
	const startMs = endMs - days * 86_400_000;
	const times = Array.from({ length: count }, () => startMs + core.rng.int(0, endMs - startMs)).sort((a, b) => a - b);
	let clientMessages = 0;
	for (const ms of times) {
		const room = core.rng.pick(rooms);
		const fromClient = core.rng.chance(0.5);
		if (fromClient) clientMessages++;
		const author = fromClient ? clientOf(room) : memberAsUser(core.rng.pick(membersIn(core, room)));
		appendStory(core.state, room, author, core.rng.pick(fromClient ? CLIENT_TEXTS : MEMBER_LINES), new Date(ms).toISOString());
	}
	const invitations = recentInvitations(core, positiveInteger(body, 'invitations') ?? 0, startMs, endMs);
	const proposals = recentProposalViews(core, positiveInteger(body, 'proposals') ?? 0, startMs, endMs);
	return { messages: count, clientMessages, invitations, proposals, from: new Date(times[0]).toISOString(), to: new Date(times[times.length - 1]).toISOString() };
}

/** `count` of the seeded proposals (at most all) viewed by their client between the two times: a VIEWED_BY_CLIENT result each, and its updatedAt. */
function recentProposalViews(core: SandboxCore, count: number, startMs: number, endMs: number): number {
	const shuffled = core.rng.sample(core.state.proposals, count);
	const times = shuffled.map(() => startMs + core.rng.int(0, endMs - startMs)).sort((a, b) => a - b);
	for (const [i, record] of shuffled.entries()) {
		const at = new Date(times[i]).toISOString();
		record.proposal.results.push({ timeStamp: at, type: 'VIEWED_BY_CLIENT' });
		record.proposal.updatedAt = at;
	}
	return shuffled.length;
}

/** `count` invitations created between the two times, in every state in turn; their uids continue the seed's numbering. */
function recentInvitations(core: SandboxCore, count: number, startMs: number, endMs: number): number {
	const { state } = core;
	const times = Array.from({ length: count }, () => startMs + core.rng.int(0, endMs - startMs)).sort((a, b) => a - b);
	for (const [i, createdMs] of times.entries()) {
		const number = ++state.counters.invitation;
		const member = state.members[(number - 1) % state.members.length];
		state.invitations.push(buildInvitation(core.rng, { number, state: INVITATION_STATES[i % INVITATION_STATES.length], member, createdMs, spreadSeconds: 0 }));
	}
	return count;
}

function membersIn(core: SandboxCore, room: ChatRoom): Member[] {
	return core.state.members.filter((m) => room.roomUsers.some((p) => p.user.id === m.uid));
}

/**
 * A message from an agency member of the room (written on the marketplace): no webhook, chat.message.sent
 * is for client messages. Takes the member's uid; answers the story as the stories list shows it.
 */
function agencyMessage(core: SandboxCore, body: Record<string, unknown>): Story & { roomId: string } {
	const roomId = stringField(body, 'roomId');
	const freelancerUid = stringField(body, 'freelancerUid');
	const room = roomId !== undefined ? findRoom(core, roomId) : core.rng.pick(core.state.rooms.filter((r) => membersIn(core, r).length > 0));
	const members = membersIn(core, room);
	const member = freelancerUid === undefined ? core.rng.pick(members) : members.find((m) => m.uid === freelancerUid);
	if (member === undefined) throw new BadRequest(`No agency member ${freelancerUid === undefined ? '' : `"${freelancerUid}" `}takes part in room "${room.roomId}".`);
	const story = appendStory(core.state, room, memberAsUser(member), stringField(body, 'text') ?? core.rng.pick(MEMBER_LINES), core.clock.nowIso());
	return { ...idView(core.state, core.variants).story(story), roomId: room.roomId };
}

/** A new pending invitation created now; its uid continues the seed's numbering. */
function newInvitation(core: SandboxCore, body: Record<string, unknown>): InvitationRecord {
	const { state } = core;
	const title = stringField(body, 'title');
	if (title !== undefined && title.trim() === '') throw new BadRequest('title must not be blank.');
	const number = ++state.counters.invitation;
	const member = state.members[(number - 1) % state.members.length];
	const record = buildInvitation(core.rng, { number, state: 'pending', member, createdMs: core.clock.nowMs(), spreadSeconds: 0, topic: title });
	state.invitations.push(record);
	return record;
}

/** An invitation accepted, declined or back to pending; its createdAt stays (the record has no other time). */
function setInvitationStatus(core: SandboxCore, body: Record<string, unknown>): InvitationRecord {
	const uid = stringField(body, 'invitationUid');
	const status = stringField(body, 'status');
	if (uid === undefined || status === undefined) throw new BadRequest('invitationStatus change needs invitationUid and status.');
	if (!INVITATION_STATES.includes(status as InvitationState)) throw new BadRequest(`status must be one of ${INVITATION_STATES.join(', ')} (got "${status}").`);
	const record = core.state.invitations.find((i) => i.invite.uid === uid);
	if (!record) throw new BadRequest(`Unknown invitation "${uid}".`);
	Object.assign(record.invite, inviteOutcome(status as InvitationState));
	return record;
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
		case 'newProposal': {
			const roomId = stringField(body, 'roomId');
			return newProposal(core, roomId === undefined ? undefined : findRoom(core, roomId));
		}
		case 'relinkProposal':
			return relinkProposal(core, body);
		case 'clientMessage':
			return clientMessage(core, body);
		case 'agencyMessage':
			return agencyMessage(core, body);
		case 'scheduleBid':
			return scheduleBid(core);
		case 'masterInbox':
			if (typeof body.active !== 'boolean') throw new BadRequest('masterInbox change needs {active: boolean}.');
			core.state.masterInboxActive = body.active;
			return { active: body.active };
		case 'newInvitation':
			return newInvitation(core, body);
		case 'invitationStatus':
			return setInvitationStatus(core, body);
		case 'lateClientMessage':
			return lateClientMessage(core, body);
		case 'roomResync':
			return roomResync(core, body);
		case 'recentHistory':
			return recentHistory(core, body);
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
