import type { IDisplayOptions, INodeProperties } from 'n8n-workflow';

import type { Operation } from './declarativeRequest';
import { simplifyProposalItems } from './declarativeRequest';
import { requireIdentifier } from './inputs';

/** The Operation parameter of a resource; each operation's routing comes from `throughPipeline`. */
export function operationSelector(resource: string, operations: Operation[], defaultOperation: string): INodeProperties {
	return {
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: [resource] } },
		options: operations,
		default: defaultOperation,
	};
}

/** The Filters collection of a list operation. */
export function filtersCollection(show: NonNullable<IDisplayOptions['show']>, filters: INodeProperties[]): INodeProperties {
	return {
		displayName: 'Filters',
		name: 'filters',
		type: 'collection',
		placeholder: 'Add Filter',
		default: {},
		displayOptions: { show },
		options: filters,
	};
}

/** Return All and Limit for a list operation; Limit may exceed one page. */
export function listControls(show: NonNullable<IDisplayOptions['show']>): INodeProperties[] {
	return [
		{
			displayName: 'Return All',
			name: 'returnAll',
			type: 'boolean',
			displayOptions: { show },
			default: false,
			description: 'Whether to return all results or only up to a given limit',
		},
		{
			displayName: 'Limit',
			name: 'limit',
			type: 'number',
			displayOptions: { show: { ...show, returnAll: [false] } },
			typeOptions: { minValue: 1 },
			default: 50,
			description: 'Max number of results to return',
			routing: { output: { maxResults: '={{ $value }}' } },
		},
	];
}

/** Simplify for operations that return proposal records. */
export function simplifyOption(show: NonNullable<IDisplayOptions['show']>): INodeProperties {
	return {
		displayName: 'Simplify',
		name: 'simplify',
		type: 'boolean',
		displayOptions: { show },
		default: false,
		description:
			'Whether to return a compact record for CRMs (IDs, status, times, job, client, freelancer, latest result, chat room) instead of the full proposal',
		routing: { output: { postReceive: [simplifyProposalItems] } },
	};
}

export function roomLocator(show: NonNullable<IDisplayOptions['show']>): INodeProperties {
	return {
		displayName: 'Room',
		name: 'roomId',
		type: 'resourceLocator',
		default: { mode: 'list', value: '' },
		required: true,
		description: 'The Master Inbox chat room',
		displayOptions: { show },
		modes: [
			{
				displayName: 'From List',
				name: 'list',
				type: 'list',
				placeholder: 'Select a room...',
				typeOptions: { searchListMethod: 'searchRooms', searchable: true },
			},
			{ displayName: 'By ID', name: 'id', type: 'string', placeholder: 'e.g. room-001' },
		],
		routing: {
			request: { url: '=/v1/master-inbox/rooms/{{ encodeURIComponent($value) }}/stories' },
			send: { preSend: [requireIdentifier('roomId', 'Room')] },
		},
	};
}

export function proposalLocator(show: NonNullable<IDisplayOptions['show']>): INodeProperties {
	return {
		displayName: 'Proposal',
		name: 'proposalId',
		type: 'resourceLocator',
		default: { mode: 'list', value: '' },
		required: true,
		description: 'The proposal to get',
		displayOptions: { show },
		modes: [
			{
				displayName: 'From List',
				name: 'list',
				type: 'list',
				placeholder: 'Select a proposal...',
				typeOptions: { searchListMethod: 'searchProposals', searchable: true },
			},
			{ displayName: 'By ID', name: 'id', type: 'string', placeholder: 'e.g. prop-0001' },
		],
		routing: {
			request: { url: '=/v1/agency/proposals/{{ encodeURIComponent($value) }}' },
			send: { preSend: [requireIdentifier('proposalId', 'Proposal')] },
		},
	};
}

export function freelancerLocator(show: NonNullable<IDisplayOptions['show']>): INodeProperties {
	return {
		displayName: 'Freelancer',
		name: 'freelancerUid',
		type: 'resourceLocator',
		default: { mode: 'list', value: '' },
		required: true,
		description: 'The agency member who sends the message; they must be a participant of the room',
		displayOptions: { show },
		modes: [
			{
				displayName: 'From List',
				name: 'list',
				type: 'list',
				placeholder: 'Select a freelancer...',
				typeOptions: { searchListMethod: 'searchFreelancers', searchable: true },
			},
			{ displayName: 'By ID', name: 'id', type: 'string', placeholder: 'e.g. mem-001' },
		],
		routing: {
			send: {
				type: 'body',
				property: 'freelancerUid',
				preSend: [requireIdentifier('freelancerUid', 'Freelancer', 'body')],
			},
		},
	};
}
