import type { IDataObject } from 'n8n-workflow';

/** The fields of a proposal record this trigger reads; the rest is passed through untouched. */
export interface ProposalRecord extends IDataObject {
	proposal: IDataObject & {
		uid: string;
		createdAt: string;
		updatedAt: string | null;
		status?: string;
		results?: Array<{ timeStamp: string; type: string }>;
	};
}

export interface ProposalPage {
	data: ProposalRecord[];
	meta?: { nextCursor?: string | null };
}

export interface ProposalQuery {
	updatedSince: string;
	status?: string;
	pageCursor?: string;
}

/** One GET /v1/agency/proposals through the package's request pipeline. */
export type FetchProposalPage = (query: ProposalQuery) => Promise<ProposalPage>;
