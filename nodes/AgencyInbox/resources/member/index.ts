import type { INodeProperties } from 'n8n-workflow';

import { operationSelector } from '../../shared/descriptions';
import { memberGetAllOperation, memberGetAllProperties } from './getAll';

export const memberDescription: INodeProperties[] = [
	operationSelector('member', [memberGetAllOperation], 'getAll'),
	...memberGetAllProperties,
];
