/**
 * The nodes panel of n8n 2.x (generateMergedNodesAndActions in the editor) merges a trigger whose type
 * name without "Trigger" is another node's into one app, and shows the trigger's description as the
 * app's. So the webhook trigger's description must describe the whole package.
 */
import { AgencyInbox } from '../../nodes/AgencyInbox/AgencyInbox.node';
import { AgencyInboxInvitationTrigger } from '../../nodes/AgencyInboxInvitationTrigger/AgencyInboxInvitationTrigger.node';
import { AgencyInboxMessageTrigger } from '../../nodes/AgencyInboxMessageTrigger/AgencyInboxMessageTrigger.node';
import { AgencyInboxProposalTrigger } from '../../nodes/AgencyInboxProposalTrigger/AgencyInboxProposalTrigger.node';
import { AgencyInboxTrigger } from '../../nodes/AgencyInboxTrigger/AgencyInboxTrigger.node';

it("describes the whole app where the nodes panel shows the app's description", () => {
	const nodes = [new AgencyInbox(), new AgencyInboxTrigger(), new AgencyInboxProposalTrigger(), new AgencyInboxMessageTrigger(), new AgencyInboxInvitationTrigger()].map((node) => node.description);
	const apps = new Map(nodes.filter((node) => !node.group.includes('trigger')).map((node) => [node.name, node.description]));
	for (const trigger of nodes.filter((node) => node.group.includes('trigger'))) {
		const merged = trigger.name.replace('Trigger', '');
		if (apps.has(merged)) apps.set(merged, trigger.description);
	}
	const appDescription = apps.get('agencyInbox')!;
	for (const topic of ['proposals', 'members', 'invitations', 'Master Inbox chat', 'bid intents', 'webhooks']) expect(appDescription).toContain(topic);
	expect(appDescription).not.toMatch(/^Starts the workflow/);
});
