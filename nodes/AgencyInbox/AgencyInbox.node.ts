import type { INodeType, INodeTypeDescription } from 'n8n-workflow';

import { MAIN_CONNECTION, USABLE_AS_TOOL } from '../shared/n8nVersions';
import { searchFreelancers, searchProposals, searchRooms } from './listSearch';
import { agencyDescription } from './resources/agency';
import { bidIntentDescription } from './resources/bidIntent';
import { chatRoomDescription } from './resources/chatRoom';
import { invitationDescription } from './resources/invitation';
import { memberDescription } from './resources/member';
import { messageDescription } from './resources/message';
import { proposalDescription } from './resources/proposal';

export class AgencyInbox implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Agency Inbox',
		name: 'agencyInbox',
		icon: { light: 'file:../../icons/agencyInbox.svg', dark: 'file:../../icons/agencyInbox.dark.svg' },
		group: ['transform'],
		version: 1,
		subtitle: '={{$parameter["operation"] + ": " + $parameter["resource"]}}',
		description: 'Read agency proposals, members and invitations, work the Master Inbox and cancel scheduled bids',
		defaults: { name: 'Agency Inbox' },
		usableAsTool: USABLE_AS_TOOL,
		inputs: [MAIN_CONNECTION],
		outputs: [MAIN_CONNECTION],
		credentials: [{ name: 'agencyInboxApi', required: true }],
		requestDefaults: {
			baseURL: '={{ $credentials.baseUrl.replace(/\\/+$/, "") }}',
			headers: { Accept: 'application/json', 'Content-Type': 'application/json' },
		},
		// Every operation's routing comes from throughPipeline (shared/declarativeRequest.ts), so every
		// request of this node runs through the pipeline.
		properties: [
			{
				displayName: 'Resource',
				name: 'resource',
				type: 'options',
				noDataExpression: true,
				options: [
					{ name: 'Agency', value: 'agency' },
					{ name: 'Bid Intent', value: 'bidIntent' },
					{ name: 'Chat Room', value: 'chatRoom' },
					{ name: 'Invitation', value: 'invitation' },
					{ name: 'Member', value: 'member' },
					{ name: 'Message', value: 'message' },
					{ name: 'Proposal', value: 'proposal' },
				],
				default: 'proposal',
			},
			...agencyDescription,
			...bidIntentDescription,
			...chatRoomDescription,
			...invitationDescription,
			...memberDescription,
			...messageDescription,
			...proposalDescription,
		],
	};

	methods = {
		listSearch: { searchFreelancers, searchProposals, searchRooms },
	};
}
