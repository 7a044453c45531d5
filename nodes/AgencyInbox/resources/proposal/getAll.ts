import type { IDataObject, INodeProperties } from 'n8n-workflow';

import { PROPOSAL_STATUS_OPTIONS } from '../../../shared/proposalStatuses';
import { simplifyProposal } from '../../../shared/simplifyProposal';
import { toolDescription, toolResultControls } from '../../shared/asTool';
import { throughPipeline, type Operation } from '../../shared/declarativeRequest';
import { filtersCollection, listControls, simplifyOption } from '../../shared/descriptions';
import { sendUpdatedSinceWithOffset } from '../../shared/inputs';

const show = { resource: ['proposal'], operation: ['getAll'] };

export const proposalGetAllOperation: Operation = {
	name: 'Get Many',
	value: 'getAll',
	action: 'Get many proposals',
	description: 'Get many proposals of the agency, by creation time, or most recently updated first with Updated Since',
	routing: throughPipeline({ method: 'GET', url: '/v1/agency/proposals' }),
};

export const proposalGetAllProperties: INodeProperties[] = [
	toolDescription(
		show,
		"Lists the agency's proposals (bids on jobs) as compact records: uid (the proposalId for the full record), status, createdAt, updatedAt, job title, url and budget, client country and total spent, freelancer uid and name, the latest result (VIEWED_BY_CLIENT, CLIENT_REPLIED, HIRED) with its time, and chatRoomId. Read-only. Argument: limit (default 10). Use the proposal tool for cover letter and job description.",
	),
	...listControls(show),
	filtersCollection(show, [
		{
			displayName: 'Status',
			name: 'status',
			type: 'options',
			options: PROPOSAL_STATUS_OPTIONS,
			default: 'active',
			description: 'Only proposals with this status',
			routing: { send: { type: 'query', property: 'status' } },
		},
		{
			displayName: 'Updated Since',
			name: 'updatedSince',
			type: 'dateTime',
			default: '',
			description:
				"Only proposals changed at or after this time (read in the workflow's time zone), newest change first. Proposals never changed since the service started recording changes are left out.",
			routing: {
				send: {
					type: 'query',
					property: 'updatedSince',
					preSend: [sendUpdatedSinceWithOffset],
				},
			},
		},
	]),
	simplifyOption(show),
	...toolResultControls(show, compactProposal, 'proposals'),
];

/** The Simplify shape, unless Simplify already made it. */
function compactProposal(record: IDataObject): IDataObject {
	return record.proposal && typeof record.proposal === 'object' ? simplifyProposal(record) : record;
}
