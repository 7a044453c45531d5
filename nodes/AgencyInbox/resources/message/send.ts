import type { INodeProperties } from 'n8n-workflow';

import { toolDescription, withToolArgument } from '../../shared/asTool';
import { throughPipeline, type Operation } from '../../shared/declarativeRequest';
import { freelancerLocator } from '../../shared/descriptions';
import { rejectBlankMessage } from '../../shared/inputs';

const show = { resource: ['message'], operation: ['send'] };

export const messageSendOperation: Operation = {
	name: 'Send',
	value: 'send',
	action: 'Send a message to a room',
	description: 'Send a plain-text message into a chat room on behalf of a freelancer',
	routing: throughPipeline({ method: 'POST' }),
};

export const messageSendProperties: INodeProperties[] = [
	toolDescription(
		show,
		'SENDS A REAL MESSAGE to the client in a chat room, in the name of an agency member; the client sees it at once and it cannot be unsent or edited. Call it only when the user wants this message sent, once per message. Arguments: roomId, freelancerUid (an agency member taking part in the room: a participant with role freelancer in the chat room list), message (plain text). Returns the sent message: storyId, userId, userName, message, createdAt.',
	),
	...withToolArgument(
		freelancerLocator(show),
		'freelancerUid',
		'uid of the agency member who sends the message, e.g. mem-001; must be a participant of the room',
	),
	...withToolArgument(
		{
			displayName: 'Message',
			name: 'message',
			type: 'string',
			typeOptions: { rows: 4 },
			required: true,
			default: '',
			description: 'Plain text to send. It is sent at most once, even when the service fails while handling it.',
			displayOptions: { show },
			routing: {
				send: {
					type: 'body',
					property: 'message',
					preSend: [rejectBlankMessage],
				},
			},
		},
		'message',
		'The plain-text message the client will read, as it should be sent',
	),
];
