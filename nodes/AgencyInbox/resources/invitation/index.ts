import type { INodeProperties } from 'n8n-workflow';

import { invitationGetAllOperation, invitationGetAllProperties } from './getAll';

export const invitationDescription: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['invitation'] } },
		options: [invitationGetAllOperation],
		default: 'getAll',
	},
	...invitationGetAllProperties,
];
