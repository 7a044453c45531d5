import type { INodeProperties } from 'n8n-workflow';

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
	roomLocator({ resource: ['message'], operation: ['getAll', 'send'] }),
	...messageGetAllProperties,
	...messageSendProperties,
];
