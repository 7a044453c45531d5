import type { INodeProperties } from 'n8n-workflow';

import { toolDescription } from '../../shared/asTool';
import { operationSelector } from '../../shared/descriptions';
import { agencyGetOperation, AGENCY_GET_FOR_MODEL } from './get';

export const agencyDescription: INodeProperties[] = [
	operationSelector('agency', [agencyGetOperation], 'get'),
	toolDescription({ resource: ['agency'], operation: ['get'] }, AGENCY_GET_FOR_MODEL),
];
