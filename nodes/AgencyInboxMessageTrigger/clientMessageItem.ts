import type { IDataObject } from 'n8n-workflow';

import type { ClientMessage } from './pollMessages';

/**
 * One new client message as an item. `event`, `timestamp` and `payload` have the shape of the
 * Agency Inbox Trigger's `chat.message.sent` item, so a workflow can switch between the webhook and
 * this trigger without changing its next nodes; the rest tells more than the webhook does.
 */
export function clientMessageItem({ room, story }: ClientMessage): IDataObject {
	const proposalUid = typeof room.vendorProposal?.id === 'string' && room.vendorProposal.id !== '' ? room.vendorProposal.id : null;
	return {
		event: 'chat.message.sent',
		timestamp: story.createdAt,
		payload: {
			proposal: proposalUid === null ? null : { uid: proposalUid },
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
			proposalUid,
		},
	};
}
