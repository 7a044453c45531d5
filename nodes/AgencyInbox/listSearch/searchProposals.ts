import type { ILoadOptionsFunctions, INodeListSearchResult } from 'n8n-workflow';

import { agencyInboxApiRequest } from '../../shared/transport';
import { matchesFilter } from './matchesFilter';

interface ProposalSummary {
	proposal?: { uid?: string };
	job?: { title?: string; url?: string };
	freelancer?: { name?: string };
}

function proposalName(record: ProposalSummary): string {
	const title = record.job?.title || record.proposal?.uid || '';
	return record.freelancer?.name ? `${title} (${record.freelancer.name})` : title;
}

/**
 * Proposals for the Proposal locator, one page per call. The service has no text search on
 * proposals, so the filter applies to the page's job titles, freelancer names and IDs.
 */
export async function searchProposals(
	this: ILoadOptionsFunctions,
	filter?: string,
	paginationToken?: string,
): Promise<INodeListSearchResult> {
	const page = await agencyInboxApiRequest.call(this, 'GET', '/v1/agency/proposals', {
		qs: paginationToken ? { pageCursor: paginationToken } : {},
	});
	const records = (Array.isArray(page.data) ? page.data : []) as unknown as ProposalSummary[];
	return {
		results: records
			.filter((record) => matchesFilter(filter, proposalName(record), record.proposal?.uid))
			.map((record) => ({ name: proposalName(record), value: record.proposal?.uid ?? '', url: record.job?.url })),
		paginationToken: page.meta?.nextCursor || undefined,
	};
}
