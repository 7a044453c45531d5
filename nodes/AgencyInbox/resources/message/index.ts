import type { INodeProperties } from 'n8n-workflow';

import { withToolArgument } from '../../shared/asTool';
import { roomLocator } from '../../shared/descriptions';
import { messageGetAllOperation, messageGetAllProperties } from './getAll';
import { messageSendOperation, messageSendProperties } from './send';

export const messageDescription: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['message'] } },
		options: [messageGetAllOperation, messageSendOperation],
		default: 'getAll',
	},
	...withToolArgument(
		roomLocator({ resource: ['message'], operation: ['getAll', 'send'] }),
		'roomId',
		'roomId of the chat room, e.g. room-001, from the chat room list or a proposal (chatRoomId)',
	),
	...messageGetAllProperties,
	...messageSendProperties,
];
