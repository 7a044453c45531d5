/**
 * Who is who in a chat room. The spec does not say under which ids the service shows agency members
 * as room participants and as message authors (a member has a `uid`, a participant a marketplace user
 * `id`, `nid` and `rid`, a message a `userId`), nor which participants belong to the agency. It does
 * say that a room's `organization` is the client's. So a person counts as an agency member by the
 * first of these that holds: one of their ids is a member's uid or cipher text; they take part in the
 * room under the client's organization (then they are the client's); they take part under another
 * organization; their name is a member's.
 */

export interface UserIds {
	id?: string | null;
	nid?: string | null;
	rid?: string | null;
	name?: string | null;
}

export interface Organization {
	id?: string | null;
	name?: string | null;
}

export interface Participant {
	user?: UserIds | null;
	organization?: Organization | null;
}

export interface RoomPeople {
	roomUsers?: Participant[] | null;
	/** The client's organization (spec: "Room organization (the client)"). */
	organization?: Organization | null;
}

export interface AgencyMember {
	uid: string;
	name?: string;
	ciphertext?: string;
}

const normalized = (text: string | null | undefined) => (text ?? '').trim().replace(/\s+/g, ' ').toLowerCase();

function sameName(a: string | null | undefined, b: string | null | undefined): boolean {
	return normalized(a) !== '' && normalized(a) === normalized(b);
}

function idsOf(user: UserIds | null | undefined): string[] {
	return [user?.id, user?.nid, user?.rid].filter((id): id is string => typeof id === 'string' && id !== '');
}

const memberWithId = (members: AgencyMember[], ids: string[]) =>
	members.find((member) => ids.includes(member.uid) || (!!member.ciphertext && ids.includes(member.ciphertext)));

/** Whether the participant is the client's (of the room's organization); undefined when an organization is not shown. */
function isClients(participant: Participant, room: RoomPeople): boolean | undefined {
	const client = room.organization;
	const theirs = participant.organization;
	if (!client || !theirs) return undefined;
	if (client.id && theirs.id) return client.id === theirs.id;
	if (client.name && theirs.name) return sameName(client.name, theirs.name);
	return undefined;
}

/** The member a participant is, if any. */
function memberOf(participant: Participant, room: RoomPeople, members: AgencyMember[]): AgencyMember | undefined {
	const byId = memberWithId(members, idsOf(participant.user));
	if (byId) return byId;
	if (isClients(participant, room) === true) return undefined;
	return members.find((member) => sameName(member.name, participant.user?.name));
}

/** The agency members taking part in the room, in the order the room lists them. */
export function agencyMembersIn(room: RoomPeople, members: AgencyMember[]): AgencyMember[] {
	const found: AgencyMember[] = [];
	for (const participant of room.roomUsers ?? []) {
		const member = participant ? memberOf(participant, room, members) : undefined;
		if (member && !found.includes(member)) found.push(member);
	}
	return found;
}

/** Whether a message (its `userId` and `userName`) was written by someone of the agency. */
export function isAgencyAuthor(author: { userId: string; userName?: string | null }, room: RoomPeople, members: AgencyMember[]): boolean {
	if (memberWithId(members, [author.userId])) return true;
	const participant = (room.roomUsers ?? []).find((candidate) => idsOf(candidate?.user).includes(author.userId));
	if (participant) {
		if (memberOf(participant, room, members)) return true;
		const clients = isClients(participant, room);
		if (clients !== undefined) return !clients;
	}
	return members.some((member) => sameName(member.name, author.userName));
}
