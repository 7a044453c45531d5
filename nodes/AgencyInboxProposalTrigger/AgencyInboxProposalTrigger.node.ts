import type {
	IDataObject,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
	IPollFunctions,
} from 'n8n-workflow';

import { MAIN_CONNECTION } from '../shared/n8nVersions';
import { agencyInboxApiRequest, simplifyProposal } from '../shared/transport';
import type { ChangeFilters, TriggerOn } from './classify';
import { proposalTriggerProperties } from './description';
import type { PollOutcome, ProposalChange } from './pollChanges';
import { findSampleChange, pollChanges } from './pollChanges';
import { claimPoll } from './pollGuard';
import type { FetchProposalPage, ProposalPage } from './types';
import { bootstrapState, loadState, saveState } from './watermark';

/** Where n8n does not say how long a poll may take (before n8n 2.x), assume its usual 5 minutes. */
const DEFAULT_POLL_BUDGET_MS = 5 * 60 * 1000;

/** Share of the poll budget spent paging; the rest covers a last request that waits for the rate limit. */
const PAGING_SHARE_OF_BUDGET = 0.5;

function proposalPageFetcher(context: IPollFunctions): FetchProposalPage {
	return async (query) =>
		(await agencyInboxApiRequest.call(context, 'GET', '/v1/agency/proposals', {
			qs: query as unknown as IDataObject,
		})) as unknown as ProposalPage;
}

/** Stop paging before n8n abandons the poll; an unfinished sweep resumes at the next poll. */
function pagingDeadline(context: IPollFunctions): () => boolean {
	const budgetMs = typeof context.getPollBudgetMs === 'function' ? context.getPollBudgetMs() : DEFAULT_POLL_BUDGET_MS;
	const deadline = Date.now() + budgetMs * PAGING_SHARE_OF_BUDGET;
	return () => Date.now() < deadline;
}

function toItem(change: ProposalChange, simplify: boolean): INodeExecutionData {
	const proposal = simplify ? simplifyProposal(change.record) : change.record;
	return { json: { trigger: change.trigger, resultEvent: change.resultEvent, ...proposal } };
}

export class AgencyInboxProposalTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Agency Inbox Proposal Trigger',
		name: 'agencyInboxProposalTrigger',
		icon: { light: 'file:../../icons/agencyInbox.svg', dark: 'file:../../icons/agencyInbox.dark.svg' },
		group: ['trigger'],
		version: 1,
		subtitle: '={{ { both: "New and updated proposals", new: "New proposals", updated: "Updated proposals" }[$parameter["triggerOn"]] }}',
		description: 'Starts the workflow when an agency proposal is created or updated (status, viewed, replied, hired)',
		defaults: { name: 'Agency Inbox Proposal Trigger' },
		polling: true,
		inputs: [],
		outputs: [MAIN_CONNECTION],
		credentials: [{ name: 'agencyInboxApi', required: true }],
		properties: proposalTriggerProperties,
	};

	async poll(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
		const filters: ChangeFilters = {
			triggerOn: this.getNodeParameter('triggerOn', 'both') as TriggerOn,
			resultEvents: (this.getNodeParameter('filters.resultEvents', []) as string[]) ?? [],
		};
		const status = (this.getNodeParameter('filters.status', '') as string) || undefined;
		const simplify = this.getNodeParameter('simplify', true) as boolean;
		const fetchPage = proposalPageFetcher(this);

		if (this.getMode() === 'manual') {
			const sample = await findSampleChange(fetchPage, { ...filters, status });
			return sample ? [[toItem(sample, simplify)]] : null;
		}

		const staticData = this.getWorkflowStaticData('node');
		const stored = loadState(staticData);
		const claim = claimPoll(`${this.getWorkflow().id}/${this.getNode().id}`, stored, Date.now());
		if (!claim.granted) {
			this.logger.debug(`Agency Inbox Proposal Trigger: poll skipped, ${claim.reason}`);
			return null;
		}
		const state = claim.startFrom ?? stored;
		let outcome: PollOutcome | undefined;
		try {
			if (!state) {
				saveState(staticData, bootstrapState(new Date()));
				return null;
			}
			outcome = await pollChanges(state, fetchPage, { ...filters, status, canContinue: pagingDeadline(this) });
			saveState(staticData, outcome.state);
		} finally {
			claim.release(loadState(staticData), (outcome?.changes.length ?? 0) > 0);
		}
		if (outcome.changes.length === 0) return null;
		return [outcome.changes.map((change) => toItem(change, simplify))];
	}
}
