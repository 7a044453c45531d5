import type { INodeProperties } from 'n8n-workflow';

import { compactStory } from '../../../shared/compactRecords';
import { toolDescription, toolResultControls } from '../../shared/asTool';
import { throughPipeline, type Operation } from '../../shared/declarativeRequest';
import { filtersCollection, listControls } from '../../shared/descriptions';

const show = { resource: ['message'], operation: ['getAll'] };

export const messageGetAllOperation: Operation = {
	name: 'Get Many',
	value: 'getAll',
	action: 'Get many messages in a room',
	description: 'Get many messages of a chat room',
	routing: throughPipeline({ method: 'GET' }),
};

export const messageGetAllProperties: INodeProperties[] = [
	toolDescription(
		show,
		'Lists the messages of one chat room. Arguments: roomId (from the chat room list, e.g. room-001; never guess it), limit (default 10). Each message: storyId, userId and userName of the author, the text, createdAt, number of attachments. Read-only.',
	),
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
	...toolResultControls(show, compactStory, 'messages'),
];
