/**
 * Compact records for an AI model: the fields it needs to act (ids, names, status, times, the last
 * message, the ids that other operations take), without avatars, cipher texts, organizations and
 * sync bookkeeping. Proposals use simplifyProposal. Missing parts become null.
 */
import type { IDataObject } from 'n8n-workflow';

/** Longest text kept from a message, letter or description; longer ones end with "…". */
export const COMPACT_TEXT_LIMIT = 300;

function objectAt(record: unknown, key: string): IDataObject {
	const value = (record as IDataObject | undefined)?.[key];
	return value && typeof value === 'object' && !Array.isArray(value) ? (value as IDataObject) : {};
}

function valueOrNull(value: unknown): IDataObject[string] {
	return value === undefined ? null : (value as IDataObject[string]);
}

/** Text cut to `limit` characters, so one long message cannot fill the model's context. */
export function shortText(value: unknown, limit = COMPACT_TEXT_LIMIT): string | null {
	if (typeof value !== 'string') return null;
	return value.length > limit ? `${value.slice(0, limit - 1)}…` : value;
}

function participant(entry: unknown): IDataObject {
	const user = objectAt(entry, 'user');
	return {
		id: valueOrNull(user.id),
		name: valueOrNull(user.name),
		role: valueOrNull((entry as IDataObject)?.role),
	};
}

/** A chat room: who is in it (with the ids Send needs), its last message, its proposal. */
export function compactRoom(room: IDataObject): IDataObject {
	const lastStory = objectAt(room, 'lastStory');
	const users = Array.isArray(room.roomUsers) ? room.roomUsers : [];
	return {
		roomId: valueOrNull(room.roomId),
		roomName: valueOrNull(room.roomName),
		topic: valueOrNull(room.topic),
		unreadCount: valueOrNull(room.unreadCount),
		lastMessage: shortText(lastStory.message),
		lastMessageBy: valueOrNull(objectAt(lastStory, 'user').name),
		lastMessageAt: valueOrNull(room.lastStoryAt ?? lastStory.createdDateTime),
		participants: users.map(participant),
		proposalId: valueOrNull(objectAt(room, 'vendorProposal').id),
		contractStatus: valueOrNull(objectAt(room, 'contract').status),
	};
}

/** A chat message (story) without the author's avatar. */
export function compactStory(story: IDataObject): IDataObject {
	return {
		storyId: valueOrNull(story.storyId),
		userId: valueOrNull(story.userId),
		userName: valueOrNull(story.userName),
		message: shortText(story.message),
		createdAt: valueOrNull(story.createdAt),
		attachments: Array.isArray(story.attachments) ? story.attachments.length : 0,
	};
}

/** An agency member: the uid is the freelancerUid that Send takes. */
export function compactMember(member: IDataObject): IDataObject {
	const profile = objectAt(member, 'generalProfile');
	return {
		uid: valueOrNull(member.uid),
		name: valueOrNull(member.name),
		role: valueOrNull(member.role),
		countryCode: valueOrNull(member.countryCode),
		title: valueOrNull(profile.title),
		hourlyRate: valueOrNull(profile.hourlyRate),
		skills: Array.isArray(profile.skills) ? profile.skills : [],
	};
}

/** An invitation record flattened: the invitation, its job, the invited freelancer, the client. */
export function compactInvitation(record: IDataObject): IDataObject {
	const invite = objectAt(record, 'invite');
	const job = objectAt(record, 'job');
	const freelancer = objectAt(record, 'freelancer');
	return {
		uid: valueOrNull(invite.uid),
		status: valueOrNull(invite.status),
		title: valueOrNull(invite.title),
		createdAt: valueOrNull(invite.createdAt),
		letter: shortText(invite.letter),
		jobTitle: valueOrNull(job.title),
		jobUrl: valueOrNull(job.url),
		freelancerUid: valueOrNull(freelancer.uid),
		freelancerName: valueOrNull(freelancer.name),
		clientCountry: valueOrNull(objectAt(record, 'client').country),
	};
}
