import type {
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
	IPollFunctions,
} from 'n8n-workflow';

import { pagingDeadline, runGuardedPoll } from '../shared/guardedPoll';
import { triggerDescription } from '../shared/triggerDescription';
import { simplifyProposal } from '../shared/simplifyProposal';
import type { ChangeFilters, TriggerOn } from './classify';
import { proposalTriggerProperties } from './description';
import type { ProposalChange } from './pollChanges';
import { findSampleChange, pollChanges } from './pollChanges';
import { proposalPageFetcher } from '../shared/proposalSweep';
import type { ProposalTriggerState } from './state';
import { bootstrapProposalState, isOlderProposalState, loadProposalState, saveProposalState } from './state';

function toItem(change: ProposalChange, simplify: boolean): INodeExecutionData {
	const proposal = simplify ? simplifyProposal(change.record) : change.record;
	return { json: { trigger: change.trigger, resultEvent: change.resultEvent, ...proposal } };
}

export class AgencyInboxProposalTrigger implements INodeType {
	description: INodeTypeDescription = {
		...triggerDescription({ polling: true }),
		displayName: 'Agency Inbox Proposal Trigger',
		name: 'agencyInboxProposalTrigger',
		icon: { light: 'file:../../icons/agencyInbox.svg', dark: 'file:../../icons/agencyInbox.dark.svg' },
		subtitle: '={{ { both: "New and updated proposals", new: "New proposals", updated: "Updated proposals" }[$parameter["triggerOn"]] }}',
		description: 'Starts the workflow when an agency proposal is created or updated (status, viewed, replied, hired)',
		defaults: { name: 'Agency Inbox Proposal Trigger' },
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

		const changes = await runGuardedPoll<ProposalTriggerState, ProposalChange>(
			this,
			{
				load: loadProposalState,
				save: saveProposalState,
				isOlder: isOlderProposalState,
				bootstrap: () => bootstrapProposalState(new Date()),
				poll: async (state) => await pollChanges(state, fetchPage, { ...filters, status, canContinue: pagingDeadline(this) }),
			},
			'Agency Inbox Proposal Trigger',
		);
		if (changes.length === 0) return null;
		return [changes.map((change) => toItem(change, simplify))];
	}
}
