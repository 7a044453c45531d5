/** The parts of the service's invitation records this trigger reads (spec: Invitation record). */

export interface InvitationRecord {
	invite: { uid: string; createdAt?: string; status?: string; result?: string; [key: string]: unknown };
	[key: string]: unknown;
}

export interface InvitationPage {
	data: InvitationRecord[];
	meta?: { nextCursor?: string | null };
}

export type FetchInvitationsPage = (pageCursor: string | undefined) => Promise<InvitationPage>;

export type InvitationTriggerOn = 'new' | 'statusChanged' | 'both';
