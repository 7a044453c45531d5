import type { INodeProperties } from 'n8n-workflow';

import { memberGetAllOperation, memberGetAllProperties } from './getAll';

export const memberDescription: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['member'] } },
		options: [memberGetAllOperation],
		default: 'getAll',
	},
	...memberGetAllProperties,
];
