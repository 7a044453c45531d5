/** The nine /v1 endpoints of the service, on the in-memory state. Auth, rate limit and faults are applied before (see server.ts). */
import { createHash } from 'node:crypto';
import { BadRequest, ok, problem, type ApiResponse } from './http';
import { paginate, parsePageSize, type Ordering, type SortKey } from './pagination';
import { idView } from './marketplaceIds';
import { roomRowTimesView, shownCreatedAt, shownTime } from './roomRowTimes';
import { resyncRooms, stalestRooms } from './roomSync';
import { applyLastStory, memberAsUser, storyId } from './seed';
import type { ChatRoom, InvitationRecord, Member, ProposalRecord, SandboxState, SentMessage, Story } from './types';
import type { MonotonicClock } from './clock';
import type { SandboxVariants } from './variants';

export interface ApiContext {
	state: SandboxState;
	clock: MonotonicClock;
	defaultPageSize: number;
	maxPageSize: number;
	variants: SandboxVariants;
}

export interface ApiRequest {
	method: string;
	/** Path below the base URL, e.g. '/v1/agency/proposals'. */
	path: string;
	/** Full path as received, used as the problem's `instance`. */
	instance: string;
	query: URLSearchParams;
	body: Record<string, unknown>;
}

type Handler = (ctx: ApiContext, req: ApiRequest, params: string[]) => ApiResponse;

interface Route {
	method: string;
	pattern: RegExp;
	handler: Handler;
	/** The query parameters the spec names for the endpoint (the stories' `search` is this package's assumption). */
	named: readonly string[];
}

const ROUTES: Route[] = [
	{ method: 'GET', pattern: /^\/v1\/agency$/, handler: getAgency, named: [] },
	{ method: 'GET', pattern: /^\/v1\/agency\/members$/, handler: listMembers, named: ['role', 'pageCursor'] },
	{ method: 'GET', pattern: /^\/v1\/agency\/invitations$/, handler: listInvitations, named: ['status', 'pageCursor'] },
	{ method: 'GET', pattern: /^\/v1\/agency\/proposals$/, handler: listProposals, named: ['status', 'pageCursor', 'updatedSince'] },
	{ method: 'GET', pattern: /^\/v1\/agency\/proposals\/([^/]+)$/, handler: getProposal, named: [] },
	{ method: 'GET', pattern: /^\/v1\/master-inbox\/rooms$/, handler: listRooms, named: ['pageCursor', 'pageSize', 'search', 'participants', 'sort', 'clientMessageOnly'] },
	{ method: 'GET', pattern: /^\/v1\/master-inbox\/rooms\/([^/]+)\/stories$/, handler: listStories, named: ['pageCursor', 'search'] },
	{ method: 'POST', pattern: /^\/v1\/master-inbox\/rooms\/([^/]+)\/stories$/, handler: sendMessage, named: [] },
	{ method: 'DELETE', pattern: /^\/v1\/bid-intents\/([^/]+)$/, handler: cancelBidIntent, named: [] },
];

/**
 * The request's query under the variant `unnamedQueryParameters`: as sent ('honoured'), without the
 * parameters the spec does not name for the route ('ignored'), or a 400 naming them ('rejected').
 */
function queryUnderReading(ctx: ApiContext, req: ApiRequest, route: Route): URLSearchParams {
	const reading = ctx.variants.unnamedQueryParameters;
	if (reading === 'honoured') return req.query;
	const unnamed = [...new Set(req.query.keys())].filter((name) => !route.named.includes(name));
	if (unnamed.length === 0) return req.query;
	if (reading === 'rejected') {
		const takes = route.named.length === 0 ? 'takes no query parameters' : `takes ${route.named.join(', ')}`;
		throw new BadRequest(`Unknown query parameter${unnamed.length > 1 ? 's' : ''} ${unnamed.map((name) => `"${name}"`).join(', ')}: ${req.method} ${req.path} ${takes}.`);
	}
	return new URLSearchParams([...req.query].filter(([name]) => route.named.includes(name)));
}

export function handleApi(ctx: ApiContext, req: ApiRequest): ApiResponse {
	let pathMatched = false;
	for (const route of ROUTES) {
		const match = route.pattern.exec(req.path);
		if (!match) continue;
		pathMatched = true;
		if (route.method !== req.method) continue;
		try {
			return route.handler(ctx, { ...req, query: queryUnderReading(ctx, req, route) }, match.slice(1).map(decodeURIComponent));
		} catch (error) {
			if (error instanceof BadRequest) return problem(400, error.message, req.instance);
			throw error;
		}
	}
	return pathMatched
		? problem(405, `${req.method} is not supported on ${req.path}.`, req.instance)
		: problem(404, `No endpoint ${req.method} ${req.path}.`, req.instance);
}

function queryValue(query: URLSearchParams, name: string): string | undefined {
	const value = query.get(name);
	return value === null ? undefined : value;
}

function oneOf(query: URLSearchParams, name: string, allowed: readonly string[]): string | undefined {
	const value = queryValue(query, name);
	if (value === undefined || value === '') return undefined;
	if (!allowed.includes(value)) throw new BadRequest(`${name} must be one of ${allowed.join(', ')} (got "${value}").`);
	return value;
}

function pageSizeOf(ctx: ApiContext, req: ApiRequest): number {
	return parsePageSize(queryValue(req.query, 'pageSize'), ctx.defaultPageSize, ctx.maxPageSize);
}

function getAgency(ctx: ApiContext): ApiResponse {
	return ok(ctx.state.agency);
}

const MEMBERS_ORDER: Ordering<Member> = { binding: 'members:uid-asc', description: 'members by uid ascending', key: (m) => [m.uid, m.uid], descending: false };

function listMembers(ctx: ApiContext, req: ApiRequest): ApiResponse {
	const role = oneOf(req.query, 'role', ['member', 'business_manager']);
	const members = ctx.state.members.filter((m) => role === undefined || m.role === role);
	return { status: 200, body: paginate(members, { ...MEMBERS_ORDER, binding: `${MEMBERS_ORDER.binding}:role=${role ?? 'any'}` }, queryValue(req.query, 'pageCursor'), pageSizeOf(ctx, req), ctx.variants.listCursors) };
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** Keys of the invitation orders; 'scrambled' is stable but unrelated to time, so a new invitation lands anywhere. */
const INVITATION_KEYS: Record<SandboxVariants['invitationOrder'], { key: (i: InvitationRecord) => SortKey; descending: boolean }> = {
	createdAtDesc: { key: (i) => [i.invite.createdAt, i.invite.uid], descending: true },
	createdAtAsc: { key: (i) => [i.invite.createdAt, i.invite.uid], descending: false },
	scrambled: { key: (i) => [sha256(i.invite.uid), i.invite.uid], descending: false },
};

function listInvitations(ctx: ApiContext, req: ApiRequest): ApiResponse {
	const status = oneOf(req.query, 'status', ['accepted', 'pending', 'declined']);
	const invitations = ctx.state.invitations.filter((i) => status === undefined || i.invite.status.toLowerCase() === status);
	const order = ctx.variants.invitationOrder;
	const ordering: Ordering<InvitationRecord> = {
		binding: `invitations:${order}:status=${status ?? 'any'}`,
		description: `invitations ${order}, status ${status ?? 'any'}`,
		...INVITATION_KEYS[order],
	};
	return { status: 200, body: paginate(invitations, ordering, queryValue(req.query, 'pageCursor'), pageSizeOf(ctx, req), ctx.variants.listCursors) };
}

const OFFSET_DATE_TIME = /^(\d{4}-\d{2}-\d{2})(?:T(\d{2}:\d{2})(?::(\d{2})(?:\.(\d+))?)?(Z|[+-]\d{2}:?\d{2}))?$/i;

/** Parses an ISO-8601 instant with `Z` or a numeric offset (a bare date means UTC midnight). */
export function parseInstant(raw: string): number {
	const match = OFFSET_DATE_TIME.exec(raw.trim());
	if (!match) throw new BadRequest(`updatedSince must be an ISO-8601 date-time with Z or a numeric offset such as +03:00 (got "${raw}").`);
	const [, date, hhmm, seconds, fraction, zone] = match;
	if (hhmm === undefined) return Date.parse(`${date}T00:00:00.000Z`);
	const millis = (fraction ?? '').padEnd(3, '0').slice(0, 3);
	const offset = zone.toUpperCase() === 'Z' ? 'Z' : zone.includes(':') ? zone : `${zone.slice(0, 3)}:${zone.slice(3)}`;
	const ms = Date.parse(`${date}T${hhmm}:${seconds ?? '00'}.${millis}${offset}`);
	if (Number.isNaN(ms)) throw new BadRequest(`updatedSince is not a valid date-time (got "${raw}").`);
	return ms;
}

function listProposals(ctx: ApiContext, req: ApiRequest): ApiResponse {
	const status = oneOf(req.query, 'status', ['active', 'submitted', 'archived']);
	const updatedSinceRaw = queryValue(req.query, 'updatedSince');
	const hasUpdatedSince = updatedSinceRaw !== undefined && updatedSinceRaw !== '';
	let proposals = ctx.state.proposals.filter((p) => status === undefined || p.proposal.status.toLowerCase() === status);
	let ordering: Ordering<ProposalRecord>;
	if (hasUpdatedSince) {
		const sinceMs = parseInstant(updatedSinceRaw);
		// Rule 3: proposals without updatedAt are only reachable without updatedSince.
		proposals = proposals.filter((p) => p.proposal.updatedAt !== null && Date.parse(p.proposal.updatedAt) >= sinceMs);
		ordering = {
			binding: `proposals:updatedAt-desc:status=${status ?? 'any'}`,
			description: `ordering by updatedAt descending (with updatedSince), status ${status ?? 'any'}`,
			key: (p) => [p.proposal.updatedAt ?? '', p.proposal.uid],
			descending: true,
		};
	} else {
		ordering = {
			binding: `proposals:createdAt-asc:status=${status ?? 'any'}`,
			description: `ordering by createdAt ascending (without updatedSince), status ${status ?? 'any'}`,
			key: (p) => [p.proposal.createdAt, p.proposal.uid],
			descending: false,
		};
	}
	// Rule 4 of updatedSince describes a cursor that is a key: the proposals' cursors are keys under every reading.
	const page = paginate(proposals, ordering, queryValue(req.query, 'pageCursor'), pageSizeOf(ctx, req));
	return { status: 200, body: { data: page.data, meta: { ...page.meta, total: proposals.length } } };
}

function getProposal(ctx: ApiContext, req: ApiRequest, [id]: string[]): ApiResponse {
	const record = ctx.state.proposals.find((p) => p.proposal.uid === id);
	return record ? ok(record) : problem(404, `Proposal "${id}" was not found.`, req.instance);
}

/** Whether a participant's shown id (see marketplaceIds.ts) or name is one of `wanted`. */
function matchesParticipants(room: ChatRoom, wanted: string[], shownId: (id: string) => string): boolean {
	return room.roomUsers.some((p) => wanted.some((w) => shownId(p.user.id).toLowerCase() === w || (p.user.name ?? '').toLowerCase() === w));
}

function isMember(state: SandboxState, userId: string | undefined): boolean {
	return userId !== undefined && state.members.some((m) => m.uid === userId);
}

function listRooms(ctx: ApiContext, req: ApiRequest): ApiResponse {
	const sort = oneOf(req.query, 'sort', ['date-desc', 'date-asc']) ?? 'date-desc';
	const clientMessageOnly = oneOf(req.query, 'clientMessageOnly', ['true', 'false']) === 'true';
	const search = (queryValue(req.query, 'search') ?? '').trim().toLowerCase();
	const participants = (queryValue(req.query, 'participants') ?? '')
		.split(',')
		.map((p) => p.trim().toLowerCase())
		.filter((p) => p !== '');
	const view = idView(ctx.state, ctx.variants);
	const rooms = ctx.state.rooms.filter(
		(room) =>
			(search === '' || [room.roomName, room.topic, room.lastStory?.message].some((text) => (text ?? '').toLowerCase().includes(search))) &&
			(participants.length === 0 || matchesParticipants(room, participants, view.userId)) &&
			(!clientMessageOnly || (room.lastStory !== null && !isMember(ctx.state, room.lastStory.user?.id))),
	);
	const by = ctx.variants.roomSort;
	const pageSize = pageSizeOf(ctx, req);
	const pageCursor = queryValue(req.query, 'pageCursor');
	// The service's background sync, under the reading where the list is sorted by it: whenever a
	// client starts reading the list, a page of the rooms synced longest ago was just re-synced.
	if (by === 'lastSyncedAt' && pageCursor === undefined) resyncRooms(stalestRooms(ctx.state, pageSize), ctx.clock.nowIso());
	const ordering: Ordering<ChatRoom> = {
		binding: `rooms:${sort}:by=${by}:${ctx.variants.roomRowTimes}:${ctx.variants.roomCreation}`,
		description: `rooms sorted ${sort} by ${by}`,
		key: (room) => [roomDate(ctx.state, room, ctx.variants) ?? '', room.roomId],
		descending: sort === 'date-desc',
	};
	const page = paginate(rooms, ordering, pageCursor, pageSize, ctx.variants.listCursors);
	return { status: 200, body: { ...page, data: page.data.map((room) => roomRowTimesView(view.room(room), ctx.variants)) } };
}

/** The date a room sorts by under the variant `roomSort`, as its row shows it: a service storing seconds sorts by seconds, ties by room id. */
function roomDate(state: SandboxState, room: ChatRoom, variants: SandboxVariants): string | null | undefined {
	const by = variants.roomSort;
	if (by === 'lastStoryAt') return shownTime(room.lastStoryAt, variants);
	if (by === 'createdAt') return shownCreatedAt(room, variants);
	if (by === 'lastSyncedAt') return shownTime(room.lastSyncedAt, variants);
	return shownTime(lastClientMessageAt(state, room), variants);
}

/** When a non-member (the client) last wrote in the room; an agency member's reply does not count. Stories are kept oldest first. */
function lastClientMessageAt(state: SandboxState, room: ChatRoom): string | undefined {
	return (state.stories[room.roomId] ?? []).filter((story) => !isMember(state, story.userId)).at(-1)?.createdAt;
}

function findRoom(ctx: ApiContext, roomId: string): ChatRoom | undefined {
	return ctx.state.rooms.find((r) => r.roomId === roomId);
}

function listStories(ctx: ApiContext, req: ApiRequest, [roomId]: string[]): ApiResponse {
	if (!findRoom(ctx, roomId)) return problem(404, `Room "${roomId}" was not found.`, req.instance);
	const search = (queryValue(req.query, 'search') ?? '').trim().toLowerCase();
	const stories = (ctx.state.stories[roomId] ?? []).filter((s) => search === '' || s.message.toLowerCase().includes(search));
	const order = ctx.variants.storyOrder;
	const ordering: Ordering<Story> = {
		binding: `stories:${roomId}:${order}`,
		description: `stories by createdAt, ${order}`,
		key: (s) => [s.createdAt, s.storyId],
		descending: order === 'newestFirst',
	};
	const page = paginate(stories, ordering, queryValue(req.query, 'pageCursor'), pageSizeOf(ctx, req), ctx.variants.listCursors);
	return { status: 200, body: { ...page, data: page.data.map(idView(ctx.state, ctx.variants).story) } };
}

function sendMessage(ctx: ApiContext, req: ApiRequest, [roomId]: string[]): ApiResponse {
	const room = findRoom(ctx, roomId);
	if (!room) return problem(404, `Room "${roomId}" was not found.`, req.instance);
	const { message, freelancerUid } = req.body;
	if (typeof message !== 'string' || message.trim() === '') return problem(400, 'message is required and must be a non-blank string.', req.instance);
	if (typeof freelancerUid !== 'string' || freelancerUid.trim() === '') return problem(400, 'freelancerUid is required.', req.instance);
	if (!ctx.state.masterInboxActive) {
		return problem(403, 'The workspace has no active Master Inbox subscription, trial or feature flag.', req.instance);
	}
	const member = ctx.state.members.find((m) => m.uid === freelancerUid);
	if (!member || !room.roomUsers.some((p) => p.user.id === freelancerUid)) {
		return problem(400, `Freelancer "${freelancerUid}" is not a participant of room "${roomId}".`, req.instance);
	}
	if (ctx.state.unauthorizedFreelancers.includes(freelancerUid)) {
		return problem(403, `Freelancer "${freelancerUid}" is not authorized to send messages.`, req.instance);
	}
	const story = appendStory(ctx.state, room, memberAsUser(member), message, ctx.clock.nowIso());
	const sent: SentMessage = { storyId: story.storyId, userId: story.userId, userName: story.userName, userPhotoUrl: story.userPhotoUrl, message: story.message, createdAt: story.createdAt, roomId, freelancerUid };
	ctx.state.messages.push(sent);
	return ok({ storyId: story.storyId, userId: idView(ctx.state, ctx.variants).userId(story.userId), userName: story.userName, userPhotoUrl: story.userPhotoUrl, message: story.message, createdAt: story.createdAt });
}

/**
 * Adds a story to a room as the service syncs it at `syncedAt` (by default when it was written): the
 * room's lastSyncedAt moves to then, and the story becomes the room's lastStory unless the room holds
 * a newer one (a story synced late, written before the room's last one, sits among the older ones).
 */
export function appendStory(
	state: SandboxState,
	room: ChatRoom,
	author: { id: string; name: string | null; photoUrl: string | null },
	message: string,
	createdAt: string,
	syncedAt = createdAt,
): Story {
	const story: Story = {
		storyId: storyId(++state.counters.story),
		userId: author.id,
		userName: author.name ?? '',
		userPhotoUrl: author.photoUrl ?? '',
		message,
		createdAt,
		attachments: [],
	};
	const stories = (state.stories[room.roomId] ??= []);
	const firstLater = stories.findIndex((other) => other.createdAt > createdAt);
	stories.splice(firstLater === -1 ? stories.length : firstLater, 0, story);
	room.storiesCount = (room.storiesCount ?? 0) + 1;
	room.lastSyncedAt = syncedAt;
	if (firstLater === -1) applyLastStory(room, story, { nid: null, rid: null, ...author });
	return story;
}

function cancelBidIntent(ctx: ApiContext, req: ApiRequest, [id]: string[]): ApiResponse {
	const intent = ctx.state.bidIntents.find((b) => b.id === id);
	if (!intent) return problem(404, `Bid intent "${id}" was not found.`, req.instance);
	if (intent.status !== 'scheduled') return problem(400, `Bid intent "${id}" is not a scheduled bid intent (its status is ${intent.status}).`, req.instance);
	intent.status = 'cancelled';
	return ok({ success: true });
}
