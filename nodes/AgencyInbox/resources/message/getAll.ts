import type { INodeProperties, INodePropertyOptions } from 'n8n-workflow';

import { filtersCollection, listControls } from '../../shared/descriptions';

const show = { resource: ['message'], operation: ['getAll'] };

export const messageGetAllOperation: INodePropertyOptions = {
	name: 'Get Many',
	value: 'getAll',
	action: 'Get many messages in a room',
	description: 'Get many messages of a chat room',
	routing: { request: { method: 'GET' }, send: { paginate: true } },
};

export const messageGetAllProperties: INodeProperties[] = [
	...listControls(show),
	filtersCollection(show, [
		{
			displayName: 'Search',
			name: 'search',
			type: 'string',
			default: '',
			description: 'Text to search for in the messages',
			routing: { send: { type: 'query', property: 'search' } },
		},
	]),
];
