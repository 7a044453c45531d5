import type { INodeProperties } from 'n8n-workflow';

import { operationSelector } from '../../shared/descriptions';
import { proposalGetOperation, proposalGetProperties } from './get';
import { proposalGetAllOperation, proposalGetAllProperties } from './getAll';

export const proposalDescription: INodeProperties[] = [
	operationSelector('proposal', [proposalGetOperation, proposalGetAllOperation], 'getAll'),
	...proposalGetProperties,
	...proposalGetAllProperties,
];
