import type { INodeProperties, INodePropertyOptions } from 'n8n-workflow';

import { proposalLocator, simplifyOption } from '../../shared/descriptions';

const show = { resource: ['proposal'], operation: ['get'] };

export const proposalGetOperation: INodePropertyOptions = {
	name: 'Get',
	value: 'get',
	action: 'Get a proposal',
	description: 'Get a proposal with its job, client and freelancer',
	routing: { request: { method: 'GET' }, send: { paginate: true } },
};

export const proposalGetProperties: INodeProperties[] = [
	proposalLocator(show),
	simplifyOption(show),
];
