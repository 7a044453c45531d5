import type { CanContinue } from '../shared/guardedPoll';
import { readListFrom } from '../shared/pagination';
import type { InvitationTriggerState } from './state';
import type { FetchInvitationsPage, InvitationRecord, InvitationTriggerOn } from './types';

export interface InvitationChange {
	trigger: 'new' | 'statusChanged';
	record: InvitationRecord;
	/** For a status change: what the list showed before. */
	previous?: { status: string; result: string };
	/** Handed on by the backfill (Start From: A Date), not found by the live polls. */
	backfilled?: boolean;
	/** What the backfill does not hand on, and why (startFrom.ts). */
	backfillNotice?: string;
}

/** Most invitations remembered; past it those the list no longer shows are forgotten first. */
export const MAX_INVITATIONS_KEPT = 20_000;

/**
 * At most MAX_INVITATIONS_KEPT. Those the poll's pages did not show go first (the list stopped showing
 * them, or they are on pages a poll that ran out of time did not read), those it showed last: one
 * forgotten while the list shows it comes back as new. Within each, the first kept go first.
 */
function keptWithin(seen: Record<string, string>, listed: ReadonlySet<string>): Record<string, string> {
	const uids = Object.keys(seen);
	if (uids.length <= MAX_INVITATIONS_KEPT) return seen;
	const byPriority = [...uids.filter((uid) => !listed.has(uid)), ...uids.filter((uid) => listed.has(uid))];
	const kept = new Set(byPriority.slice(byPriority.length - MAX_INVITATIONS_KEPT));
	return Object.fromEntries(uids.filter((uid) => kept.has(uid)).map((uid) => [uid, seen[uid]]));
}

/** Marks an invitation the live polls found (not the activation): no backfill hands it on. */
const FOUND_LIVE = '+';

/** What the trigger keeps of an invitation: whether it was found live, when it was created, its status and its result. */
const seenAs = (record: InvitationRecord, foundLive: boolean) => `${foundLive ? FOUND_LIVE : ''}${record.invite.createdAt ?? ''} ${record.invite.status ?? ''}/${record.invite.result ?? ''}`;

export const isFoundLive = (seen: string) => seen.startsWith(FOUND_LIVE);

export function parseSeen(seen: string): { createdAt: string; status: string; result: string } {
	const from = isFoundLive(seen) ? FOUND_LIVE.length : 0;
	const space = seen.indexOf(' ', from);
	const slash = seen.indexOf('/', space);
	return { createdAt: seen.slice(from, space), status: seen.slice(space + 1, slash), result: seen.slice(slash + 1) };
}

/** What one poll read of the list: its invitations, and where the list goes on when time ran out first. */
interface ListRead {
	records: InvitationRecord[];
	resumeAt?: string;
}

/**
 * The invitations of the list from `resumeAt` (none: the top), page by page, until the end or the
 * poll's time is up; a cursor the service no longer takes starts the list again from the top.
 */
async function readFrom(fetchPage: FetchInvitationsPage, canContinue: CanContinue, resumeAt: string | undefined): Promise<ListRead> {
	return await readListFrom(fetchPage, resumeAt, async (pages) => {
		const records: InvitationRecord[] = [];
		for await (const { page, next } of pages) {
			for (const record of page.data ?? []) if (typeof record?.invite?.uid === 'string') records.push(record);
			if (next !== undefined && !canContinue()) return { records, resumeAt: next };
		}
		return { records };
	});
}

/** What one poll read of the list: its records, and whether it began at the list's top and read to its end. */
export interface PollRead {
	records: InvitationRecord[];
	fromTop: boolean;
	toEnd: boolean;
}

/** The first poll: every invitation listed now is history. */
export async function bootstrapInvitations(fetchPage: FetchInvitationsPage): Promise<InvitationTriggerState> {
	const { records } = await readFrom(fetchPage, () => true, undefined);
	return { seq: 1, seen: Object.fromEntries(records.map((record) => [record.invite.uid, seenAs(record, false)])), marksLive: true };
}

/**
 * One poll. The spec states no order for the invitation list and no time of a status change, so a
 * new invitation may appear on any page and a changed one stays where it was: every poll reads the
 * whole list and compares it with the invitations seen before, by uid. A poll that runs out of time
 * emits what its pages showed, and the next poll goes on from there, so a list longer than one poll
 * can read is still read to its end (then the next poll starts at the top). An invitation the list stops
 * showing stays remembered (an answer that briefly lists nothing must not make the whole list new).
 */
export async function pollInvitations(
	state: InvitationTriggerState,
	fetchPage: FetchInvitationsPage,
	options: { triggerOn: InvitationTriggerOn; canContinue: CanContinue },
): Promise<{ state: InvitationTriggerState; changes: InvitationChange[]; read: PollRead }> {
	const { records, resumeAt } = await readFrom(fetchPage, options.canContinue, state.resumeAt);
	const seen: Record<string, string> = { ...state.seen };
	const changes: InvitationChange[] = [];
	for (const record of records) {
		const uid = record.invite.uid;
		const before = state.seen[uid] === undefined ? undefined : parseSeen(state.seen[uid]);
		// Another creation time under a known uid is another invitation (a service whose data was reset).
		const isNew = before === undefined || before.createdAt !== (record.invite.createdAt ?? '');
		seen[uid] = seenAs(record, isNew || isFoundLive(state.seen[uid]));
		if (isNew) changes.push({ trigger: 'new', record });
		else if (before.status !== (record.invite.status ?? '') || before.result !== (record.invite.result ?? '')) {
			changes.push({ trigger: 'statusChanged', record, previous: { status: before.status, result: before.result } });
		}
	}
	const wanted = changes.filter((change) => options.triggerOn === 'both' || change.trigger === options.triggerOn);
	wanted.sort((a, b) => Date.parse(a.record.invite.createdAt ?? '') - Date.parse(b.record.invite.createdAt ?? '') || 0);
	const listed = new Set(records.map((record) => record.invite.uid));
	return {
		state: {
			seq: state.seq + 1,
			seen: keptWithin(seen, listed),
			...(resumeAt === undefined ? {} : { resumeAt }),
			...(state.backfill ? { backfill: state.backfill } : {}),
			...(state.marksLive ? { marksLive: true } : {}),
		},
		changes: wanted,
		read: { records, fromTop: state.resumeAt === undefined, toEnd: resumeAt === undefined },
	};
}
