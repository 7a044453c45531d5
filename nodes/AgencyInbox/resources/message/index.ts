import type { INodeProperties } from 'n8n-workflow';

import { withToolArgument } from '../../shared/asTool';
import { operationSelector, roomLocator } from '../../shared/descriptions';
import { messageGetAllOperation, messageGetAllProperties } from './getAll';
import { messageSendOperation, messageSendProperties } from './send';

export const messageDescription: INodeProperties[] = [
	operationSelector('message', [messageGetAllOperation, messageSendOperation], 'getAll'),
	...withToolArgument(
		roomLocator({ resource: ['message'], operation: ['getAll', 'send'] }),
		'roomId',
		'roomId of the chat room, e.g. room-001, from the chat room list or a proposal (chatRoomId)',
	),
	...messageGetAllProperties,
	...messageSendProperties,
];
