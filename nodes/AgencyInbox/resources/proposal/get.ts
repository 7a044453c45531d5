import type { INodeProperties } from 'n8n-workflow';

import { toolDescription, withToolArgument } from '../../shared/asTool';
import { throughPipeline, type Operation } from '../../shared/declarativeRequest';
import { proposalLocator, simplifyOption } from '../../shared/descriptions';

const show = { resource: ['proposal'], operation: ['get'] };

export const proposalGetOperation: Operation = {
	name: 'Get',
	value: 'get',
	action: 'Get a proposal',
	description: 'Get a proposal with its job, client and freelancer',
	routing: throughPipeline({ method: 'GET' }),
};

export const proposalGetProperties: INodeProperties[] = [
	toolDescription(
		show,
		'Returns one proposal in full: status, cover letter, answers to questions, result events (VIEWED_BY_CLIENT, CLIENT_REPLIED, HIRED), the job (title, description, budget, url), the client, the freelancer and chatRoomId (the roomId of its chat). Argument: proposalId (e.g. prop-0001, from the proposal list; never guess it). Read-only. About 2 KB.',
	),
	...withToolArgument(
		proposalLocator(show),
		'proposalId',
		'uid of the proposal, e.g. prop-0001, from the proposal list or a chat room (proposalId)',
	),
	simplifyOption(show),
];
