import type { INodeProperties } from 'n8n-workflow';

import { operationSelector } from '../../shared/descriptions';
import { invitationGetAllOperation, invitationGetAllProperties } from './getAll';

export const invitationDescription: INodeProperties[] = [
	operationSelector('invitation', [invitationGetAllOperation], 'getAll'),
	...invitationGetAllProperties,
];
