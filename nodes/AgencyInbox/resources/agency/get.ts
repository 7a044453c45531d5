import type { INodePropertyOptions } from 'n8n-workflow';

export const AGENCY_GET_FOR_MODEL =
	"Returns the agency's profile: uid, name, description, timezone (IANA) and connectsBalance. Read-only, no arguments.";

export const agencyGetOperation: INodePropertyOptions = {
	name: 'Get',
	value: 'get',
	action: 'Get the agency profile',
	description: 'Get the profile of the agency linked to the API key',
	routing: {
		request: { method: 'GET', url: '/v1/agency' },
		send: { paginate: true },
	},
};
