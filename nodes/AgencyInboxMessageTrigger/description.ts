import type { INodeProperties } from 'n8n-workflow';

import { startFromProperties } from '../shared/startFrom';

export const messageTriggerProperties: INodeProperties[] = [
	{
		displayName:
			'Polls the Master Inbox for new messages from clients. Needs no public URL: use it where the service cannot reach your n8n; where it can, the Agency Inbox Trigger (webhook) starts sooner and costs no requests.',
		name: 'pollingNotice',
		type: 'notice',
		default: '',
	},
	...startFromProperties('client messages written'),
];
