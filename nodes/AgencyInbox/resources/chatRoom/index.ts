import type { INodeProperties } from 'n8n-workflow';

import { chatRoomGetAllOperation, chatRoomGetAllProperties } from './getAll';

export const chatRoomDescription: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['chatRoom'] } },
		options: [chatRoomGetAllOperation],
		default: 'getAll',
	},
	...chatRoomGetAllProperties,
];
