import type { INodeProperties } from 'n8n-workflow';

import { toolDescription, withToolArgument } from '../../shared/asTool';
import { throughPipeline, type Operation } from '../../shared/declarativeRequest';
import { requireIdentifier } from '../../shared/inputs';

const show = { resource: ['bidIntent'], operation: ['cancel'] };

export const bidIntentCancelOperation: Operation = {
	name: 'Cancel',
	value: 'cancel',
	action: 'Cancel a scheduled bid intent',
	description: 'Cancel a bid that the automatic bidder has scheduled',
	routing: throughPipeline({ method: 'DELETE' }),
};

export const bidIntentCancelProperties: INodeProperties[] = [
	toolDescription(
		show,
		'Cancels a bid that the automatic bidder has scheduled, so the bid is never placed. IRREVERSIBLE: a cancelled bid intent cannot be restored. Argument: bidIntentId (e.g. bid-001, from a bid_intent.scheduled event; never guess it). Only a scheduled bid intent can be cancelled. Returns {success: true}.',
	),
	...withToolArgument(
		{
			displayName: 'Bid Intent ID',
			name: 'bidIntentId',
			type: 'string',
			required: true,
			default: '',
			placeholder: 'e.g. bid-001',
			description: 'ID of the scheduled bid intent, for example from the bid_intent.scheduled event of the Agency Inbox Trigger',
			displayOptions: { show },
			routing: {
				request: { url: '=/v1/bid-intents/{{ encodeURIComponent($value) }}' },
				send: { preSend: [requireIdentifier('bidIntentId', 'Bid Intent ID')] },
			},
		},
		'bidIntentId',
		'ID of the scheduled bid intent to cancel, e.g. bid-001, exactly as given by a bid_intent.scheduled event',
	),
];
