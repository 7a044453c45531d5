import type { IDataObject } from 'n8n-workflow';

import type { Mark } from '../shared/marks';
import { isMark } from '../shared/marks';
import type { MessageBackfill } from './backfill';
import { loadMessageBackfill } from './backfill';
import type { FailingRoom } from './failingRooms';
import { loadFailingRooms } from './failingRooms';
import type { LateSyncMark } from './lateSync';
import { loadLateSyncMark } from './lateSync';
import type { RoomProposalsState } from './roomProposal';
import { loadRoomProposals } from './roomProposal';

/**
 * What the trigger last read of one room: its newest message (any author), the room's lastStoryId
 * then, and what finds a message synced behind it later (lateSync.ts).
 */
export interface RoomMark extends Mark, LateSyncMark {
	last: string | null;
}

export interface MessageTriggerState {
	/** Counts the polls that moved the state on: which of two states is newer. */
	seq: number;
	/**
	 * The activation's history line, the newest message time the activation read in the room list:
	 * messages created before it (and the ones listed at it) are history and never emitted. Null when the
	 * inbox was empty then. It never moves.
	 */
	history: Mark | null;
	/**
	 * The highest mark dropped past MAX_ROOMS_KEPT, if any: a room without a mark is read after the
	 * later of this and the history line (its messages up to here were read when its mark was kept).
	 */
	forgotten?: Mark;
	/**
	 * The top of the room list's first page at the last complete poll: a poll may stop paging at a row
	 * below it, where the rows it read show that nothing below can be new (see roomListOrder.ts).
	 */
	floor: Mark | null;
	/** The rooms read since the activation, the most recent ones. */
	rooms: Record<string, RoomMark>;
	/**
	 * Whether a sweep must read every page before early stops are trusted again: set when a poll saw the
	 * room list out of last-message order, or a room below the floor with a message the trigger had not
	 * read; cleared by a sweep (one poll or several, see `sweep`) that read every page and whose pages
	 * showed neither. Stored as `listOutOfMessageOrder` before it could be cleared; loaded from that.
	 */
	mustReadAllPages: boolean;
	/**
	 * When the last sweep that read every page of the list started (ISO), or the activation that did;
	 * absent (an activation cut at its deadline, a state stored before it existed): the next poll reads on.
	 */
	allPagesReadAt?: string;
	/** A read of the list that a poll's (or the activation's) deadline cut: the next polls go on with it. */
	sweep?: SweepInProgress;
	/**
	 * Rooms whose last read failed, by room id (failingRooms.ts): held back until their next try, their
	 * marks kept as they were. Absent when none fails (and in a state stored before it existed).
	 */
	failingRooms?: Record<string, FailingRoom>;
	/** The rooms' proposals: the index by chatRoomId and the lookups made while the full pass goes on (roomProposal.ts). */
	proposals: RoomProposalsState;
	/** What the backfill (Start From: A Date) handed on, and its pass under way (backfill.ts). Absent: none ever ran. */
	backfill?: MessageBackfill;
	/** Set where the history line was taken from the floor of a state stored before it existed: messages below it may have been handed on, so no backfill. */
	historyFromFloor?: true;
}

/**
 * A read of the room list cut at a poll's deadline, to go on with from where it stopped: rooms past
 * what one poll can read are reached by the next polls instead of never.
 */
export interface SweepInProgress {
	/** meta.nextCursor of the last page read: where the sweep goes on. */
	cursor: string;
	/** When the poll (or activation) that started it did (ISO): `allPagesReadAt` once it reaches the end. */
	startedAt: string;
	/** The top of the list's first page when it started: the floor once it is complete. Absent: that page had no message time. */
	firstPageTop?: Mark;
	/** Whether a room it read left its last message unread: then it raises no floor. */
	unreadLastMessage: boolean;
	/** Whether its pages showed a contradiction (see `mustReadAllPages`): then it clears none. */
	contradiction: boolean;
	/** The failing rooms whose rows it saw: with the rows of the poll that ends it, which rows the list holds. */
	failingRowsSeen: string[];
}

/** Most rooms kept; past it the rooms whose newest message read is oldest are dropped (see `forgotten`). */
export const MAX_ROOMS_KEPT = 2_000;

const isRoomMark = (value: unknown): value is RoomMark =>
	isMark(value) && ((value as RoomMark).last === null || typeof (value as RoomMark).last === 'string');

const isMarkOrNull = (value: unknown): value is Mark | null => value === null || isMark(value);

const isTime = (value: unknown): value is string => typeof value === 'string' && !Number.isNaN(Date.parse(value));

/** A stored sweep in progress, checked; one that does not check out is dropped (the next poll starts from the top). */
function isSweep(value: unknown): value is SweepInProgress {
	const sweep = value as SweepInProgress | undefined;
	return (
		typeof sweep?.cursor === 'string' &&
		sweep.cursor !== '' &&
		isTime(sweep.startedAt) &&
		(sweep.firstPageTop === undefined || isMark(sweep.firstPageTop)) &&
		typeof sweep.unreadLastMessage === 'boolean' &&
		typeof sweep.contradiction === 'boolean' &&
		Array.isArray(sweep.failingRowsSeen) &&
		sweep.failingRowsSeen.every((roomId) => typeof roomId === 'string')
	);
}

/**
 * The stored state, or undefined before the first poll. A state stored before the history line
 * existed (it had `roomsMoveOnMessages`) takes its floor for the history line: it then vouched that
 * every message before it was emitted or history. Its `roomsMoveOnMessages` is dropped, not trusted:
 * whether a poll may stop early is shown again by each poll's own rows. A state stored before
 * `mustReadAllPages` had `listOutOfMessageOrder`, the same flag.
 */
export function loadMessageState(staticData: IDataObject): MessageTriggerState | undefined {
	const stored = staticData.messages as unknown as (Partial<MessageTriggerState> & { roomsMoveOnMessages?: unknown; listOutOfMessageOrder?: unknown }) | undefined;
	if (!stored || typeof stored.seq !== 'number' || stored.floor === undefined || !isMarkOrNull(stored.floor)) return undefined;
	const historyStored = stored.history !== undefined && isMarkOrNull(stored.history);
	const history = historyStored ? (stored.history as Mark | null) : stored.floor;
	const rooms = Object.fromEntries(
		Object.entries(stored.rooms ?? {})
			.filter(([, room]) => isRoomMark(room))
			.map(([roomId, room]) => [roomId, { at: room.at, uids: room.uids, last: room.last, ...loadLateSyncMark(room) }]),
	);
	const failingRooms = loadFailingRooms(stored.failingRooms);
	const backfill = loadMessageBackfill(stored.backfill);
	return {
		seq: stored.seq,
		history,
		...(isMark(stored.forgotten) ? { forgotten: stored.forgotten } : {}),
		floor: stored.floor,
		rooms,
		mustReadAllPages: stored.mustReadAllPages === true || stored.listOutOfMessageOrder === true,
		...(isTime(stored.allPagesReadAt) ? { allPagesReadAt: stored.allPagesReadAt } : {}),
		...(isSweep(stored.sweep) ? { sweep: stored.sweep } : {}),
		...(Object.keys(failingRooms).length > 0 ? { failingRooms } : {}),
		proposals: loadRoomProposals(stored.proposals),
		...(backfill ? { backfill } : {}),
		...(historyStored && stored.historyFromFloor !== true ? {} : { historyFromFloor: true }),
	};
}

export const isOlderMessageState = (stored: MessageTriggerState | undefined, than: MessageTriggerState) => !stored || stored.seq < than.seq;

/** Writes a poll's state unless a newer one is stored already (another poll finished first). */
export function saveMessageState(staticData: IDataObject, polled: MessageTriggerState): void {
	const stored = loadMessageState(staticData);
	if (stored && stored.seq >= polled.seq) return;
	staticData.messages = polled as unknown as IDataObject;
}
