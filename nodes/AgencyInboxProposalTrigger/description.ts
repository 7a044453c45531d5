import type { INodeProperties } from 'n8n-workflow';

import { PROPOSAL_STATUS_OPTIONS } from '../shared/proposalStatuses';
import { startFromProperties } from '../shared/startFrom';

export const RESULT_EVENT_OPTIONS = [
	{ name: 'Client Replied', value: 'CLIENT_REPLIED' },
	{ name: 'Hired', value: 'HIRED' },
	{ name: 'Viewed by Client', value: 'VIEWED_BY_CLIENT' },
];

export const proposalTriggerProperties: INodeProperties[] = [
	{
		displayName: 'Trigger On',
		name: 'triggerOn',
		type: 'options',
		options: [
			{
				name: 'New and Updated Proposals',
				value: 'both',
				description: 'Proposals created since the last poll, and changes to existing ones',
			},
			{
				name: 'New Proposals',
				value: 'new',
				description: 'Proposals created since the last poll',
			},
			{
				name: 'Updated Proposals',
				value: 'updated',
				description: 'A status change or a new result event (viewed, replied, hired) on an existing proposal',
			},
		],
		default: 'both',
	},
	{
		displayName: 'Simplify',
		name: 'simplify',
		type: 'boolean',
		default: true,
		description: 'Whether to return a compact version of each proposal instead of the full record',
	},
	{
		displayName: 'Filters',
		name: 'filters',
		type: 'collection',
		placeholder: 'Add Filter',
		default: {},
		options: [
			{
				displayName: 'Result Events',
				name: 'resultEvents',
				type: 'multiOptions',
				options: RESULT_EVENT_OPTIONS,
				default: [],
				description:
					'Fire for an updated proposal only when its newest result event since the last poll is one of these. New proposals are not affected. Empty: every update.',
			},
			{
				displayName: 'Status',
				name: 'status',
				type: 'options',
				options: PROPOSAL_STATUS_OPTIONS,
				default: 'active',
				description: 'Only proposals that currently have this status',
			},
		],
	},
	...startFromProperties('proposals created or updated'),
	{
		displayName:
			'Proposals that predate the service\'s updatedAt field (updatedAt empty) are not seen by this trigger until they change. With Start From: Now, activating emits nothing historic: the trigger fires for changes made after activation.',
		name: 'notice',
		type: 'notice',
		default: '',
	},
];
