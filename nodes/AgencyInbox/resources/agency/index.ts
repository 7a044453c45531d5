import type { INodeProperties } from 'n8n-workflow';

import { agencyGetOperation } from './get';

export const agencyDescription: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['agency'] } },
		options: [agencyGetOperation],
		default: 'get',
	},
];
