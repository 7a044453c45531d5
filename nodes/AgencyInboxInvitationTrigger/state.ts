import type { IDataObject } from 'n8n-workflow';

export interface InvitationTriggerState {
	/** Counts the polls that moved the state on: which of two states is newer. */
	seq: number;
	/** Every invitation the list showed, by uid: its creation time, status and result as last seen ("createdAt status/result"). */
	seen: Record<string, string>;
	/** Where the list goes on, when the last poll ran out of time before its end. */
	resumeAt?: string;
}

export function loadInvitationState(staticData: IDataObject): InvitationTriggerState | undefined {
	const stored = staticData.invitations as unknown as InvitationTriggerState | undefined;
	if (!stored || typeof stored.seq !== 'number' || typeof stored.seen !== 'object' || stored.seen === null) return undefined;
	return { seq: stored.seq, seen: stored.seen, ...(typeof stored.resumeAt === 'string' ? { resumeAt: stored.resumeAt } : {}) };
}

export const isOlderInvitationState = (stored: InvitationTriggerState | undefined, than: InvitationTriggerState) => !stored || stored.seq < than.seq;

/** Writes a poll's state unless a newer one is stored already (another poll finished first). */
export function saveInvitationState(staticData: IDataObject, polled: InvitationTriggerState): void {
	const stored = loadInvitationState(staticData);
	if (stored && stored.seq >= polled.seq) return;
	staticData.invitations = polled as unknown as IDataObject;
}
