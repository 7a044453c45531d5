import type { INodeProperties, INodePropertyOptions } from 'n8n-workflow';

import { freelancerLocator } from '../../shared/descriptions';
import { rejectBlankMessage } from '../../shared/inputs';

const show = { resource: ['message'], operation: ['send'] };

export const messageSendOperation: INodePropertyOptions = {
	name: 'Send',
	value: 'send',
	action: 'Send a message to a room',
	description: 'Send a plain-text message into a chat room on behalf of a freelancer',
	routing: { request: { method: 'POST' }, send: { paginate: true } },
};

export const messageSendProperties: INodeProperties[] = [
	freelancerLocator(show),
	{
		displayName: 'Message',
		name: 'message',
		type: 'string',
		typeOptions: { rows: 4 },
		required: true,
		default: '',
		description: 'Plain text to send. It is sent at most once, even when the service fails while handling it.',
		displayOptions: { show },
		routing: { send: { type: 'body', property: 'message', preSend: [rejectBlankMessage] } },
	},
];
