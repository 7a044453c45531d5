import type { IDataObject } from 'n8n-workflow';

import type { InvitationBackfill } from './backfill';
import { loadInvitationBackfill } from './backfill';

export interface InvitationTriggerState {
	/** Counts the polls that moved the state on: which of two states is newer. */
	seq: number;
	/** Every invitation the list showed, by uid: its creation time, status and result as last seen ("createdAt status/result"). */
	seen: Record<string, string>;
	/** Where the list goes on, when the last poll ran out of time before its end. */
	resumeAt?: string;
	/** What the backfill (Start From: A Date) handed on, and its pass under way (backfill.ts). Absent: none ever ran. */
	backfill?: InvitationBackfill;
	/** Whether `seen` marks the invitations found live (pollInvitations.ts); absent in a state stored before it did: no backfill then. */
	marksLive?: true;
}

export function loadInvitationState(staticData: IDataObject): InvitationTriggerState | undefined {
	const stored = staticData.invitations as unknown as InvitationTriggerState | undefined;
	if (!stored || typeof stored.seq !== 'number' || typeof stored.seen !== 'object' || stored.seen === null) return undefined;
	const backfill = loadInvitationBackfill(stored.backfill);
	return {
		seq: stored.seq,
		seen: stored.seen,
		...(typeof stored.resumeAt === 'string' ? { resumeAt: stored.resumeAt } : {}),
		...(backfill ? { backfill } : {}),
		...(stored.marksLive === true ? { marksLive: true } : {}),
	};
}

export const isOlderInvitationState = (stored: InvitationTriggerState | undefined, than: InvitationTriggerState) => !stored || stored.seq < than.seq;

/** Writes a poll's state unless a newer one is stored already (another poll finished first). */
export function saveInvitationState(staticData: IDataObject, polled: InvitationTriggerState): void {
	const stored = loadInvitationState(staticData);
	if (stored && stored.seq >= polled.seq) return;
	staticData.invitations = polled as unknown as IDataObject;
}
