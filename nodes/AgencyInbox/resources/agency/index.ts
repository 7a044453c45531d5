import type { INodeProperties } from 'n8n-workflow';

import { toolDescription } from '../../shared/asTool';
import { agencyGetOperation, AGENCY_GET_FOR_MODEL } from './get';

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
	toolDescription({ resource: ['agency'], operation: ['get'] }, AGENCY_GET_FOR_MODEL),
];
