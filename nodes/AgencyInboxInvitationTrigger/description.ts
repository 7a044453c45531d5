import type { INodeProperties } from 'n8n-workflow';

import { startFromProperties } from '../shared/startFrom';

export const invitationTriggerProperties: INodeProperties[] = [
	{
		displayName: 'Trigger On',
		name: 'triggerOn',
		type: 'options',
		options: [
			{ name: 'New Invitations', value: 'new', description: 'An invitation to a job that the list did not show before' },
			{ name: 'New and Changed Invitations', value: 'both', description: 'New invitations, and invitations whose status or result changed' },
			{ name: 'Status Changes', value: 'statusChanged', description: 'An invitation whose status or result changed (for example pending to accepted)' },
		],
		default: 'new',
	},
	{
		displayName:
			'Each poll reads the whole invitation list (one request per 100 invitations): the service does not say in which order it lists them or when a status changed.',
		name: 'costNotice',
		type: 'notice',
		default: '',
	},
	...startFromProperties('invitations created'),
];
