/**
 * The Invitation Trigger's backfill (Start From: A Date). The activation notes every invitation the list
 * shows as history; the backfill hands on those created within its range, oldest first, at most
 * BACKFILL_RUN_SIZE a poll, each with its status as the poll reads it. It costs no request: every poll
 * reads the whole list anyway. An invitation the live polls found (marked in `seen`) is theirs, however
 * old, so no date hands it on again. With Status Changes it hands on the invitations created since the
 * date that are no longer pending (their status changed since), as status changes; otherwise each one as new.
 */
import type { BackfillLedger, BackfillPass, StartDate } from '../shared/startFrom';
import { BACKFILL_RUN_SIZE, ledgerAfterPass, loadLedger, passFor, withinPass } from '../shared/startFrom';
import type { InvitationChange, PollRead } from './pollInvitations';
import { isFoundLive, parseSeen } from './pollInvitations';
import type { InvitationTriggerState } from './state';
import type { InvitationRecord, InvitationTriggerOn } from './types';

export interface InvitationBackfillProgress {
	/** The invitations this pass handed on, by uid. */
	handed: string[];
	/**
	 * The sweep of the list under way (a poll that runs out of time leaves the rest to the next): whether
	 * it left some of the pass's invitations for later (more than a run); absent while the pass has not
	 * seen the sweep from the list's top.
	 */
	sweepLeftSome?: boolean;
}

export type InvitationBackfill = BackfillLedger<InvitationBackfillProgress>;

function isProgress(value: unknown): value is InvitationBackfillProgress {
	const progress = value as InvitationBackfillProgress | undefined;
	return Array.isArray(progress?.handed) && progress.handed.every((uid) => typeof uid === 'string') && ['undefined', 'boolean'].includes(typeof progress.sweepLeftSome);
}

export const loadInvitationBackfill = (value: unknown): InvitationBackfill | undefined => loadLedger(value, isProgress);

const isPending = (record: InvitationRecord) => (record.invite.status ?? '').toUpperCase() === 'PENDING';

/** An invitation of the activation's history within the pass's range, not handed on yet. */
function owned(pass: BackfillPass<InvitationBackfillProgress>, seen: Record<string, string>, handed: ReadonlySet<string>): (uid: string) => boolean {
	return (uid) => {
		const value = seen[uid];
		if (value === undefined || isFoundLive(value) || handed.has(uid)) return false;
		return withinPass(pass, Date.parse(parseSeen(value).createdAt));
	};
}

/**
 * One poll's share of the backfill, over the records this poll read. Those of its range the poll did not
 * read wait for a poll that reads them; the pass ends with the end of a sweep of the whole list (over one
 * poll or several) that it saw from the top and that left none of its invitations for later (one the
 * list no longer shows is gone).
 */
export function stepInvitationBackfill(
	state: InvitationTriggerState,
	read: PollRead,
	date: StartDate | undefined,
	triggerOn: InvitationTriggerOn,
): { backfill: InvitationBackfill | undefined; changes: InvitationChange[] } {
	const unchanged = { backfill: state.backfill, changes: [] };
	if (date === undefined) return unchanged;
	const pass = passFor(state.backfill, date, () => ({ handed: [] }));
	if (pass === undefined) return unchanged;
	const handed = new Set(pass.progress.handed);
	const isOwned = owned(pass, state.seen, handed);
	const due = read.records.filter((record) => isOwned(record.invite.uid));
	due.sort((a, b) => Date.parse(a.invite.createdAt ?? '') - Date.parse(b.invite.createdAt ?? '') || a.invite.uid.localeCompare(b.invite.uid));
	const run = due.slice(0, BACKFILL_RUN_SIZE);
	for (const record of run) handed.add(record.invite.uid);
	const wanted = triggerOn === 'statusChanged' ? run.filter((record) => !isPending(record)) : run;
	const changes: InvitationChange[] = wanted.map((record) => ({
		trigger: triggerOn === 'statusChanged' ? 'statusChanged' : 'new',
		record,
		backfilled: true,
		...(pass.notice ? { backfillNotice: pass.notice } : {}),
	}));
	// A poll from the top begins a sweep the pass sees whole; one that goes on keeps what the sweep left so far.
	const leftBefore = read.fromTop ? false : pass.progress.sweepLeftSome;
	const sweepLeftSome = leftBefore === undefined ? undefined : leftBefore || due.length > run.length;
	// One the list no longer shows is gone: only the list as read decides the end.
	const ended = read.toEnd && sweepLeftSome === false;
	const after = { ...pass, progress: { handed: [...handed], ...(sweepLeftSome === undefined || read.toEnd ? {} : { sweepLeftSome }) } };
	return { backfill: ended ? ledgerAfterPass(state.backfill, after) : { ...state.backfill, pass: after }, changes };
}
