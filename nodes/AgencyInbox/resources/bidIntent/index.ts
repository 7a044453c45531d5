import type { INodeProperties } from 'n8n-workflow';

import { bidIntentCancelOperation, bidIntentCancelProperties } from './cancel';

export const bidIntentDescription: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['bidIntent'] } },
		options: [bidIntentCancelOperation],
		default: 'cancel',
	},
	...bidIntentCancelProperties,
];
