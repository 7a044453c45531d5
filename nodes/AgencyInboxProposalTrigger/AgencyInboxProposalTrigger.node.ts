import type {
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
	IPollFunctions,
} from 'n8n-workflow';

import { pagingDeadline, runGuardedPoll } from '../shared/guardedPoll';
import { checkDateOfNewPass, readStartDate, refuseBeyondLimit } from '../shared/startFrom';
import { triggerDescription } from '../shared/triggerDescription';
import { simplifyProposal } from '../shared/simplifyProposal';
import { stepProposalBackfill } from './backfill';
import type { ChangeFilters, TriggerOn } from './classify';
import { proposalTriggerProperties } from './description';
import type { ProposalChange } from './pollChanges';
import { findSampleChange, pollChanges } from './pollChanges';
import { proposalPageFetcher } from '../shared/proposalSweep';
import type { ProposalTriggerState } from './state';
import { bootstrapProposalState, isOlderProposalState, loadProposalState, saveProposalState } from './state';

/** The backfill reads every page of its range: larger pages where the service takes them. */
const BACKFILL_PAGE_SIZE = '100';

function toItem(change: ProposalChange, simplify: boolean): INodeExecutionData {
	const proposal = simplify ? simplifyProposal(change.record) : change.record;
	const notice = change.backfillNotice ? { backfillNotice: change.backfillNotice } : {};
	return { json: { trigger: change.trigger, resultEvent: change.resultEvent, ...proposal, backfilled: change.backfilled === true, ...notice } };
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

		const nowMs = Date.now();
		const startDate = readStartDate(this, nowMs);
		if (this.getMode() === 'manual') {
			if (startDate) refuseBeyondLimit(this, startDate, nowMs);
			const sample = await findSampleChange(fetchPage, { ...filters, status }, startDate);
			return sample ? [[toItem(sample, simplify)]] : null;
		}
		const stored = loadProposalState(this.getWorkflowStaticData('node'));
		checkDateOfNewPass(this, startDate, stored, stored?.liveSince !== undefined, nowMs);
		const backfillSources = { fetchPage: proposalPageFetcher(this, BACKFILL_PAGE_SIZE), status };

		const changes = await runGuardedPoll<ProposalTriggerState, ProposalChange>(
			this,
			{
				load: loadProposalState,
				save: saveProposalState,
				isOlder: isOlderProposalState,
				bootstrap: () => bootstrapProposalState(new Date()),
				poll: async (state) => {
					const canContinue = pagingDeadline(this);
					const live = await pollChanges(state, fetchPage, { ...filters, status, canContinue });
					if (!state.liveSince) return live;
					// The backfill after the live changes: what changes now never waits behind the history.
					const backfill = await stepProposalBackfill(state.backfill, startDate, state.liveSince, filters, { ...backfillSources, canContinue });
					if (backfill.backfill === state.backfill) return live;
					const { backfill: ledger } = backfill;
					const stepped = { ...(ledger ? { backfill: ledger } : {}), backfillStep: (state.backfillStep ?? 0) + 1 };
					return { state: { ...live.state, ...stepped }, changes: [...live.changes, ...backfill.changes] };
				},
			},
			'Agency Inbox Proposal Trigger',
		);
		if (changes.length === 0) return null;
		return [changes.map((change) => toItem(change, simplify))];
	}
}
