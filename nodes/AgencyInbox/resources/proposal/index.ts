import type { INodeProperties } from 'n8n-workflow';

import { proposalGetOperation, proposalGetProperties } from './get';
import { proposalGetAllOperation, proposalGetAllProperties } from './getAll';

export const proposalDescription: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['proposal'] } },
		options: [proposalGetOperation, proposalGetAllOperation],
		default: 'getAll',
	},
	...proposalGetProperties,
	...proposalGetAllProperties,
];
