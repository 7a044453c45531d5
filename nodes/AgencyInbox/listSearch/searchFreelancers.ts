import type { ILoadOptionsFunctions, INodeListSearchResult } from 'n8n-workflow';

import { agencyInboxApiRequest } from '../../shared/transport';
import { matchesFilter } from './matchesFilter';

interface MemberSummary {
	uid: string;
	name?: string;
}

/** Agency members for the Freelancer locator; the filter applies to names and IDs. */
export async function searchFreelancers(
	this: ILoadOptionsFunctions,
	filter?: string,
	paginationToken?: string,
): Promise<INodeListSearchResult> {
	const page = await agencyInboxApiRequest.call(this, 'GET', '/v1/agency/members', {
		qs: paginationToken ? { pageCursor: paginationToken } : {},
	});
	const members = (Array.isArray(page.data) ? page.data : []) as unknown as MemberSummary[];
	return {
		results: members
			.filter((member) => matchesFilter(filter, member.name, member.uid))
			.map((member) => ({ name: member.name || member.uid, value: member.uid })),
		paginationToken: page.meta?.nextCursor || undefined,
	};
}
