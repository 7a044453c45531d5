import type { IDataObject, INodeExecutionData, INodeType, INodeTypeDescription, IPollFunctions } from 'n8n-workflow';

import { pagingDeadline, runGuardedPoll } from '../shared/guardedPoll';
import { agencyInboxApiRequest } from '../shared/serviceClient';
import { triggerDescription } from '../shared/triggerDescription';
import { invitationTriggerProperties } from './description';
import type { InvitationChange } from './pollInvitations';
import { bootstrapInvitations, pollInvitations } from './pollInvitations';
import type { InvitationTriggerState } from './state';
import { isOlderInvitationState, loadInvitationState, saveInvitationState } from './state';
import type { FetchInvitationsPage, InvitationPage, InvitationTriggerOn } from './types';

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
	return { json: { trigger: change.trigger, ...previous, ...change.record } as IDataObject };
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
		const fetchPage = invitationsFetcher(this);
		if (this.getMode() === 'manual') {
			const newest = [...((await fetchPage(undefined)).data ?? [])].sort((a, b) => Date.parse(b.invite.createdAt ?? '') - Date.parse(a.invite.createdAt ?? ''))[0];
			return newest ? [[toItem({ trigger: triggerOn === 'statusChanged' ? 'statusChanged' : 'new', record: newest })]] : null;
		}
		const changes = await runGuardedPoll<InvitationTriggerState, InvitationChange>(
			this,
			{
				load: loadInvitationState,
				save: saveInvitationState,
				isOlder: isOlderInvitationState,
				bootstrap: async () => await bootstrapInvitations(fetchPage),
				poll: async (state) => await pollInvitations(state, fetchPage, { triggerOn, canContinue: pagingDeadline(this) }),
			},
			'Agency Inbox Invitation Trigger',
		);
		if (changes.length === 0) return null;
		return [changes.map(toItem)];
	}
}
