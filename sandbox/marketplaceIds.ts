/**
 * The id readings (variants `vendorProposalId` and `authorIds`), applied where a room or a story leaves
 * the sandbox. The state keeps member uids and proposal uids, so a reading switched at run time changes
 * every answer at once and never the data.
 */
import { createHash } from 'node:crypto';
import type { ChatRoom, Participant, SandboxState, User } from './types';
import type { SandboxVariants } from './variants';

const hashHex = (text: string, length: number): string => createHash('sha256').update(text).digest('hex').slice(0, length);

/** A member's marketplace user id: stable, and never a member uid. */
export const marketplaceUserIdOf = (memberUid: string): string => `usr-${hashHex(`marketplace-user:${memberUid}`, 10)}`;

/** A proposal's id on the marketplace side: stable, and never a proposal uid. */
export const marketplaceProposalIdOf = (proposalUid: string): string => `~01${hashHex(`marketplace-proposal:${proposalUid}`, 18)}`;

export interface IdView {
	/** How the service shows a marketplace user's id (a member's uid or its marketplace user id). */
	userId(id: string): string;
	room(room: ChatRoom): ChatRoom;
	story<T extends { userId: string }>(story: T): T;
}

/** Rooms and stories as the service shows them under `variants`; the default readings show them as stored. */
export function idView(state: SandboxState, variants: SandboxVariants): IdView {
	const memberUids = new Set(variants.authorIds === 'marketplaceUserId' ? state.members.map((m) => m.uid) : []);
	const userId = (id: string): string => (memberUids.has(id) ? marketplaceUserIdOf(id) : id);
	const user = (u: User): User => ({ ...u, id: userId(u.id) });
	const participant = (p: Participant): Participant => ({ ...p, user: user(p.user) });
	const maybeParticipant = (p: Participant | null): Participant | null => (p === null ? null : participant(p));
	const vendorProposal = (link: ChatRoom['vendorProposal']): ChatRoom['vendorProposal'] =>
		link === null || variants.vendorProposalId === 'proposalUid'
			? link
			: { id: marketplaceProposalIdOf(link.id), userId: marketplaceUserIdOf(link.userId), marketplaceJobPostingId: link.marketplaceJobPostingId };
	const unchanged = variants.authorIds === 'memberUid' && variants.vendorProposalId === 'proposalUid';
	return {
		userId,
		room: (room) =>
			unchanged
				? room
				: {
						...room,
						roomUsers: room.roomUsers.map(participant),
						lastStory: room.lastStory && { ...room.lastStory, user: room.lastStory.user && user(room.lastStory.user) },
						creator: maybeParticipant(room.creator),
						owner: maybeParticipant(room.owner),
						vendorProposal: vendorProposal(room.vendorProposal),
						blockedBy: maybeParticipant(room.blockedBy),
					},
		story: (story) => (unchanged ? story : { ...story, userId: userId(story.userId) }),
	};
}
