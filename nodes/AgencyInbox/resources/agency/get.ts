import { throughPipeline, type Operation } from '../../shared/declarativeRequest';

export const AGENCY_GET_FOR_MODEL =
	"Returns the agency's profile: uid, name, description, timezone (IANA) and connectsBalance. Read-only, no arguments.";

export const agencyGetOperation: Operation = {
	name: 'Get',
	value: 'get',
	action: 'Get the agency profile',
	description: 'Get the profile of the agency linked to the API key',
	routing: throughPipeline({ method: 'GET', url: '/v1/agency' }),
};
