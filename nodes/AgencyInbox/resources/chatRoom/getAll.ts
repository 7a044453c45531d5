import type { INodeProperties } from 'n8n-workflow';

import { compactRoom } from '../../../shared/compactRecords';
import { toolDescription, toolResultControls } from '../../shared/asTool';
import { throughPipeline, type Operation } from '../../shared/declarativeRequest';
import { filtersCollection, listControls } from '../../shared/descriptions';

const show = { resource: ['chatRoom'], operation: ['getAll'] };

export const chatRoomGetAllOperation: Operation = {
	name: 'Get Many',
	value: 'getAll',
	action: 'Get many chat rooms',
	description: 'Get many Master Inbox chat rooms, most recent message first by default',
	routing: throughPipeline({ method: 'GET', url: '/v1/master-inbox/rooms' }),
};

export const chatRoomGetAllProperties: INodeProperties[] = [
	toolDescription(
		show,
		'Lists the Master Inbox chat rooms with clients, latest message first. Each room: roomId (for the message tools), roomName, topic, unreadCount, the last message (text, author, time), participants (id, name, role; agency members have role freelancer and their id is a freelancerUid for sending) and the linked proposalId. Read-only. Argument: limit (default 10).',
	),
	...listControls(show),
	filtersCollection(show, [
		{
			displayName: 'Client Messages Only',
			name: 'clientMessageOnly',
			type: 'boolean',
			default: true,
			description: 'Whether to return only rooms whose latest message comes from the client',
			routing: {
				send: {
					type: 'query',
					property: 'clientMessageOnly',
					value: '={{ String($value) }}',
				},
			},
		},
		{
			displayName: 'Participants',
			name: 'participants',
			type: 'string',
			default: '',
			placeholder: 'e.g. mem-001, Jane Doe',
			description: 'Comma-separated user IDs or names; rooms with any of them are returned',
			routing: { send: { type: 'query', property: 'participants' } },
		},
		{
			displayName: 'Search',
			name: 'search',
			type: 'string',
			default: '',
			description: 'Text to search for in the rooms',
			routing: { send: { type: 'query', property: 'search' } },
		},
	]),
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		displayOptions: { show },
		options: [
			{
				displayName: 'Page Size',
				name: 'pageSize',
				type: 'number',
				typeOptions: { minValue: 1 },
				default: 20,
				description: 'How many rooms to fetch per request; larger pages need fewer requests of the rate limit',
				routing: {
					send: {
						type: 'query',
						property: 'pageSize',
						value: '={{ String($value) }}',
					},
				},
			},
			{
				displayName: 'Sort',
				name: 'sort',
				type: 'options',
				options: [
					{ name: 'Latest Message First', value: 'date-desc' },
					{ name: 'Oldest Message First', value: 'date-asc' },
				],
				default: 'date-desc',
				description: 'Order by the time of the latest message',
				routing: { send: { type: 'query', property: 'sort' } },
			},
		],
	},
	...toolResultControls(show, compactRoom, 'rooms'),
];
