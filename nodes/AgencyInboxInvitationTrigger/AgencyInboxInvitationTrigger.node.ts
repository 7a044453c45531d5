import type { IDataObject, INodeExecutionData, INodeType, INodeTypeDescription, IPollFunctions } from 'n8n-workflow';

import { pagingDeadline, runGuardedPoll } from '../shared/guardedPoll';
import { agencyInboxApiRequest } from '../shared/serviceClient';
import { checkDateOfNewPass, readStartDate, refuseBeyondLimit } from '../shared/startFrom';
import { triggerDescription } from '../shared/triggerDescription';
import { stepInvitationBackfill } from './backfill';
import { invitationTriggerProperties } from './description';
import type { InvitationChange } from './pollInvitations';
import { bootstrapInvitations, pollInvitations } from './pollInvitations';
import type { InvitationTriggerState } from './state';
import { isOlderInvitationState, loadInvitationState, saveInvitationState } from './state';
import type { FetchInvitationsPage, InvitationPage, InvitationRecord, InvitationTriggerOn } from './types';

const byCreation = (a: InvitationRecord, b: InvitationRecord) => Date.parse(a.invite.createdAt ?? '') - Date.parse(b.invite.createdAt ?? '');

function invitationsFetcher(context: IPollFunctions): FetchInvitationsPage {
	return async (pageCursor) =>
		(await agencyInboxApiRequest.call(context, 'GET', '/v1/agency/invitations', {
			qs: pageCursor ? { pageCursor } : {},
			// The spec names no page size for this list: sent for economy, dropped if the service refuses it.
			optionalQs: { pageSize: '100' },
		})) as unknown as InvitationPage;
}

function toItem(change: InvitationChange): INodeExecutionData {
	const previous = change.previous ? { previousStatus: change.previous.status, previousResult: change.previous.result } : {};
	const notice = change.backfillNotice ? { backfillNotice: change.backfillNotice } : {};
	return { json: { trigger: change.trigger, ...previous, ...change.record, backfilled: change.backfilled === true, ...notice } as IDataObject };
}

export class AgencyInboxInvitationTrigger implements INodeType {
	description: INodeTypeDescription = {
		...triggerDescription({ polling: true }),
		displayName: 'Agency Inbox Invitation Trigger',
		name: 'agencyInboxInvitationTrigger',
		icon: { light: 'file:../../icons/agencyInbox.svg', dark: 'file:../../icons/agencyInbox.dark.svg' },
		subtitle: '={{ { new: "New invitations", both: "New and changed invitations", statusChanged: "Invitation status changes" }[$parameter["triggerOn"]] }}',
		description: 'Starts the workflow when the agency is invited to a job, or an invitation changes status (polling)',
		defaults: { name: 'Agency Inbox Invitation Trigger' },
		properties: invitationTriggerProperties,
	};

	async poll(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
		const triggerOn = this.getNodeParameter('triggerOn', 'new') as InvitationTriggerOn;
		const nowMs = Date.now();
		const startDate = readStartDate(this, nowMs);
		const fetchPage = invitationsFetcher(this);
		if (this.getMode() === 'manual') {
			if (startDate) refuseBeyondLimit(this, startDate, nowMs);
			const listed = (await fetchPage(undefined)).data ?? [];
			// With a date: the oldest invitation since it on the first page, as the backfill hands it on.
			const sample = startDate
				? listed.filter((record) => Date.parse(record.invite.createdAt ?? '') >= startDate.ms).sort(byCreation)[0]
				: [...listed].sort(byCreation).reverse()[0];
			return sample ? [[toItem({ trigger: triggerOn === 'statusChanged' ? 'statusChanged' : 'new', record: sample, backfilled: startDate !== undefined })]] : null;
		}
		const stored = loadInvitationState(this.getWorkflowStaticData('node'));
		checkDateOfNewPass(this, startDate, stored, stored?.marksLive === true, nowMs);
		const changes = await runGuardedPoll<InvitationTriggerState, InvitationChange>(
			this,
			{
				load: loadInvitationState,
				save: saveInvitationState,
				isOlder: isOlderInvitationState,
				bootstrap: async () => await bootstrapInvitations(fetchPage),
				poll: async (state) => {
					const live = await pollInvitations(state, fetchPage, { triggerOn, canContinue: pagingDeadline(this) });
					// The backfill after the live changes: what happens now never waits behind the history.
					const backfill = stepInvitationBackfill(state, live.read, startDate, triggerOn);
					return { state: { ...live.state, ...(backfill.backfill ? { backfill: backfill.backfill } : {}) }, changes: [...live.changes, ...backfill.changes] };
				},
			},
			'Agency Inbox Invitation Trigger',
		);
		if (changes.length === 0) return null;
		return [changes.map(toItem)];
	}
}
