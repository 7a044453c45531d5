import type { INodeProperties } from 'n8n-workflow';

import { compactMember } from '../../../shared/compactRecords';
import { toolDescription, toolResultControls } from '../../shared/asTool';
import { throughPipeline, type Operation } from '../../shared/declarativeRequest';
import { filtersCollection, listControls } from '../../shared/descriptions';

const show = { resource: ['member'], operation: ['getAll'] };

export const memberGetAllOperation: Operation = {
	name: 'Get Many',
	value: 'getAll',
	action: 'Get many members',
	description: 'Get many members of the agency',
	routing: throughPipeline({ method: 'GET', url: '/v1/agency/members' }),
};

export const memberGetAllProperties: INodeProperties[] = [
	toolDescription(
		show,
		"Lists the agency's members. Each: uid (the freelancerUid for sending messages), name, role (member or business_manager), countryCode, title, hourlyRate, skills. Read-only. Argument: limit (default 10).",
	),
	...listControls(show),
	filtersCollection(show, [
		{
			displayName: 'Role',
			name: 'role',
			type: 'options',
			options: [
				{ name: 'Business Manager', value: 'business_manager' },
				{ name: 'Member', value: 'member' },
			],
			default: 'member',
			description: 'Only members with this role',
			routing: { send: { type: 'query', property: 'role' } },
		},
	]),
	...toolResultControls(show, compactMember, 'members'),
];
