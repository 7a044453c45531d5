import type { INodeProperties } from 'n8n-workflow';

import { operationSelector } from '../../shared/descriptions';
import { bidIntentCancelOperation, bidIntentCancelProperties } from './cancel';

export const bidIntentDescription: INodeProperties[] = [
	operationSelector('bidIntent', [bidIntentCancelOperation], 'cancel'),
	...bidIntentCancelProperties,
];
