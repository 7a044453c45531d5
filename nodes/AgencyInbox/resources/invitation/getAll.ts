import type { INodeProperties } from 'n8n-workflow';

import { compactInvitation } from '../../../shared/compactRecords';
import { toolDescription, toolResultControls } from '../../shared/asTool';
import { throughPipeline, type Operation } from '../../shared/declarativeRequest';
import { filtersCollection, listControls } from '../../shared/descriptions';

const show = { resource: ['invitation'], operation: ['getAll'] };

export const invitationGetAllOperation: Operation = {
	name: 'Get Many',
	value: 'getAll',
	action: 'Get many invitations',
	description: 'Get many job invitations received by the agency',
	routing: throughPipeline({ method: 'GET', url: '/v1/agency/invitations' }),
};

export const invitationGetAllProperties: INodeProperties[] = [
	toolDescription(
		show,
		'Lists the job invitations clients sent to the agency. Each: uid, status, title, createdAt, the start of the letter, jobTitle, jobUrl, the invited freelancer (uid, name) and clientCountry. Read-only. Argument: limit (default 10).',
	),
	...listControls(show),
	filtersCollection(show, [
		{
			displayName: 'Status',
			name: 'status',
			type: 'options',
			options: [
				{ name: 'Accepted', value: 'accepted' },
				{ name: 'Declined', value: 'declined' },
				{ name: 'Pending', value: 'pending' },
			],
			default: 'pending',
			description: 'Only invitations with this status',
			routing: { send: { type: 'query', property: 'status' } },
		},
	]),
	...toolResultControls(show, compactInvitation, 'invitations'),
];
