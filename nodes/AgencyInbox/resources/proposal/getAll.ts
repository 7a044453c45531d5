import type { INodeProperties, INodePropertyOptions } from 'n8n-workflow';

import { PROPOSAL_STATUS_OPTIONS } from '../../../shared/proposalStatuses';
import { filtersCollection, listControls, simplifyOption } from '../../shared/descriptions';
import { sendUpdatedSinceWithOffset } from '../../shared/inputs';

const show = { resource: ['proposal'], operation: ['getAll'] };

export const proposalGetAllOperation: INodePropertyOptions = {
	name: 'Get Many',
	value: 'getAll',
	action: 'Get many proposals',
	description: 'Get many proposals of the agency, oldest first, or most recently updated first with Updated Since',
	routing: { request: { method: 'GET', url: '/v1/agency/proposals' }, send: { paginate: true } },
};

export const proposalGetAllProperties: INodeProperties[] = [
	...listControls(show),
	filtersCollection(show, [
		{
			displayName: 'Status',
			name: 'status',
			type: 'options',
			options: PROPOSAL_STATUS_OPTIONS,
			default: 'active',
			description: 'Only proposals with this status',
			routing: { send: { type: 'query', property: 'status' } },
		},
		{
			displayName: 'Updated Since',
			name: 'updatedSince',
			type: 'dateTime',
			default: '',
			description:
				"Only proposals changed at or after this time (read in the workflow's time zone), newest change first. Proposals never changed since the service started recording changes are left out.",
			routing: {
				send: { type: 'query', property: 'updatedSince', preSend: [sendUpdatedSinceWithOffset] },
			},
		},
	]),
	simplifyOption(show),
];
