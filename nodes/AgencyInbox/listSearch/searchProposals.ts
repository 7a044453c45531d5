import type { ILoadOptionsFunctions, INodeListSearchItems, INodeListSearchResult } from 'n8n-workflow';

import { agencyInboxApiRequest } from '../../shared/serviceClient';
import { listLabel, shortTime } from './labels';
import { matchesFilter } from './matchesFilter';

interface ProposalSummary {
	proposal?: { uid?: string; status?: string; updatedAt?: string | null; createdAt?: string };
	job?: { title?: string; url?: string };
	freelancer?: { name?: string };
}

/** "Job title · freelancer · status · updated <time> (proposal-id)", linking to the job's page. */
function proposalListItem(record: ProposalSummary): INodeListSearchItems {
	const uid = record.proposal?.uid ?? '';
	const updated = shortTime(record.proposal?.updatedAt);
	const when = updated ? `updated ${updated}` : `created ${shortTime(record.proposal?.createdAt) ?? '?'}`;
	return {
		name: listLabel([record.job?.title, record.freelancer?.name, record.proposal?.status, when], uid),
		value: uid,
		...(record.job?.url ? { url: record.job.url } : {}),
	};
}

/**
 * Proposals for the Proposal locator, one page per call. The service has no text search on
 * proposals, so the filter applies to the page's labels (job title, freelancer, status, ID).
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
		results: records.map(proposalListItem).filter((item) => matchesFilter(filter, item.name)),
		paginationToken: page.meta?.nextCursor || undefined,
	};
}
