import type { IDataObject } from 'n8n-workflow';

import type { AgencyMember } from '../shared/roomPeople';
import type { ClientMessage } from './pollMessages';
import type { ProposalSummary } from './roomProposal';

const person = (member: AgencyMember) => ({ uid: member.uid, name: member.name ?? null });

/**
 * The agency member to reply as: the room's proposal's freelancer where they take part in the room,
 * else the first agency member taking part, else the proposal's freelancer.
 */
function replyAs(proposal: ProposalSummary | null, agencyMembers: AgencyMember[]): { uid: string; name: string | null } | null {
	const freelancer = proposal?.freelancer;
	const taking = agencyMembers.find((member) => member.uid === freelancer?.uid) ?? agencyMembers[0];
	if (taking) return person(taking);
	return freelancer ?? null;
}

/**
 * One new client message as an item. `event`, `timestamp` and `payload` have the shape of the
 * Agency Inbox Trigger's `chat.message.sent` item, so a workflow can switch between the webhook and
 * this trigger without changing its next nodes; the rest tells more than the webhook does.
 */
export function clientMessageItem({
	room,
	story,
	proposal: { proposal, proposals, proposalsComplete, notice: proposalNotice },
	agencyMembers,
	notice: failingNotice,
	backfilled,
	backfillNotice,
}: ClientMessage): IDataObject {
	const notice = [proposalNotice, failingNotice].filter(Boolean).join(' ');
	return {
		event: 'chat.message.sent',
		timestamp: story.createdAt,
		payload: {
			proposal: proposal === null ? null : { uid: proposal.uid },
			message: { text: story.message },
			chat: { id: room.roomId },
		},
		message: {
			storyId: story.storyId,
			text: story.message,
			createdAt: story.createdAt,
			attachments: (story.attachments ?? []) as IDataObject[],
		},
		author: { id: story.userId, name: story.userName ?? null, photoUrl: story.userPhotoUrl ?? null },
		room: {
			id: room.roomId,
			name: room.roomName ?? null,
			topic: room.topic ?? null,
			client: room.organization?.name ?? null,
			proposalUid: proposal?.uid ?? null,
			proposals: proposals as unknown as IDataObject[] | null,
			proposalsComplete,
			agencyMembers: agencyMembers.map(person),
			replyAs: replyAs(proposal, agencyMembers),
		},
		backfilled: backfilled === true,
		...(notice ? { notice } : {}),
		...(backfillNotice ? { backfillNotice } : {}),
	};
}
