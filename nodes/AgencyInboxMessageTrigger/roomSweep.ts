/**
 * A sweep of the room list: the pages one poll reads from the top, or, where a poll's deadline cut it,
 * the pages several polls read in turn, each going on from the cursor the last one stopped at. What a
 * sweep leaves for the next poll: the floor, whether early stops are trusted, when every page was read,
 * and the sweep to go on with.
 */
import type { Mark } from '../shared/marks';
import { higherMark } from '../shared/marks';
import type { MessageTriggerState, SweepInProgress } from './state';

/** A sweep as the polls that read it add to it; saved with its cursor when a deadline cuts it. */
export type Sweep = Omit<SweepInProgress, 'cursor'>;

/** A sweep a poll (or the activation) starts from the top at `startedAtMs`, the list's first page topped by `firstPageTop`. */
export function newSweep(startedAtMs: number, firstPageTop: Mark | undefined): Sweep {
	return { startedAt: new Date(startedAtMs).toISOString(), ...(firstPageTop ? { firstPageTop } : {}), unreadLastMessage: false, contradiction: false, failingRowsSeen: [] };
}

/** What one poll saw, added to the sweep it read part of. */
export function withPoll(sweep: Sweep, seen: { unreadLastMessage: boolean; contradiction: boolean; failingRowsSeen: string[] }): Sweep {
	return {
		startedAt: sweep.startedAt,
		...(sweep.firstPageTop ? { firstPageTop: sweep.firstPageTop } : {}),
		unreadLastMessage: sweep.unreadLastMessage || seen.unreadLastMessage,
		contradiction: sweep.contradiction || seen.contradiction,
		failingRowsSeen: seen.failingRowsSeen,
	};
}

/**
 * How a poll's read of the list ended: at its end (every page of the sweep read), at an early stop,
 * or cut at the deadline, with the cursor to go on from (none: the next poll starts from the top).
 */
export type ListEnd = { end: 'end' } | { end: 'stop' } | { end: 'cut'; resumeAt?: string };

export interface SweepRead {
	/** The sweep the poll read part of (its own, or the one it went on with), with what it saw added. */
	sweep: Sweep;
	listEnd: ListEnd;
	/** Whether the read shows that every room with something new was read (see pollMessages.ts: the first page read again). */
	complete: boolean;
}

/**
 * The floor, the stop flag, the time every page was read and the sweep to go on with, after a poll.
 * A complete sweep raises the floor to the top of ITS first page (the poll that started it read that
 * page at one moment; a room the sweep did not read got its message after it), unless a room it read
 * left its last message unread. A sweep that reached the end read every page: it clears the stop flag
 * when none of its pages showed a contradiction, and counts as the read of every page from its start.
 */
export function listStateAfter(state: MessageTriggerState, read: SweepRead): Pick<MessageTriggerState, 'floor' | 'mustReadAllPages' | 'allPagesReadAt' | 'sweep'> {
	const { sweep, listEnd } = read;
	const floor = read.complete && !sweep.unreadLastMessage && sweep.firstPageTop ? higherMark(state.floor ?? undefined, sweep.firstPageTop) : state.floor;
	if (listEnd.end === 'end') return { floor, mustReadAllPages: sweep.contradiction, allPagesReadAt: sweep.startedAt };
	const kept = { floor, mustReadAllPages: state.mustReadAllPages || sweep.contradiction, ...(state.allPagesReadAt === undefined ? {} : { allPagesReadAt: state.allPagesReadAt }) };
	if (listEnd.end === 'cut' && listEnd.resumeAt !== undefined) return { ...kept, sweep: { ...sweep, cursor: listEnd.resumeAt } };
	return kept;
}
