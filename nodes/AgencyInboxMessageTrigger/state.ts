import type { IDataObject } from 'n8n-workflow';

import type { Mark } from '../shared/marks';
import { isMark } from '../shared/marks';
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
	 * Whether a poll since the activation saw the room list out of last-message order, or a room below
	 * the floor with a message the trigger had not read: then no poll of this activation stops early.
	 * Never reset while the state lives.
	 */
	listOutOfMessageOrder: boolean;
	/** When a poll last read every page of the list, or the activation (ISO); absent (a state stored before it existed): the next poll does. */
	allPagesReadAt?: string;
	/**
	 * Rooms whose last read failed, by room id (failingRooms.ts): held back until their next try, their
	 * marks kept as they were. Absent when none fails (and in a state stored before it existed).
	 */
	failingRooms?: Record<string, FailingRoom>;
	/** The rooms' proposals: the index by chatRoomId and the lookups made while the full pass goes on (roomProposal.ts). */
	proposals: RoomProposalsState;
}

/** Most rooms kept; past it the rooms whose newest message read is oldest are dropped (see `forgotten`). */
export const MAX_ROOMS_KEPT = 2_000;

const isRoomMark = (value: unknown): value is RoomMark =>
	isMark(value) && ((value as RoomMark).last === null || typeof (value as RoomMark).last === 'string');

const isMarkOrNull = (value: unknown): value is Mark | null => value === null || isMark(value);

/**
 * The stored state, or undefined before the first poll. A state stored before the history line
 * existed (it had `roomsMoveOnMessages`) takes its floor for the history line: it then vouched that
 * every message before it was emitted or history. Its `roomsMoveOnMessages` is dropped, not trusted:
 * whether a poll may stop early is shown again by each poll's own rows.
 */
export function loadMessageState(staticData: IDataObject): MessageTriggerState | undefined {
	const stored = staticData.messages as unknown as (Partial<MessageTriggerState> & { roomsMoveOnMessages?: unknown }) | undefined;
	if (!stored || typeof stored.seq !== 'number' || stored.floor === undefined || !isMarkOrNull(stored.floor)) return undefined;
	const history = stored.history !== undefined && isMarkOrNull(stored.history) ? stored.history : stored.floor;
	const rooms = Object.fromEntries(
		Object.entries(stored.rooms ?? {})
			.filter(([, room]) => isRoomMark(room))
			.map(([roomId, room]) => [roomId, { at: room.at, uids: room.uids, last: room.last, ...loadLateSyncMark(room) }]),
	);
	const failingRooms = loadFailingRooms(stored.failingRooms);
	return {
		seq: stored.seq,
		history,
		...(isMark(stored.forgotten) ? { forgotten: stored.forgotten } : {}),
		floor: stored.floor,
		rooms,
		listOutOfMessageOrder: stored.listOutOfMessageOrder === true,
		...(typeof stored.allPagesReadAt === 'string' && !Number.isNaN(Date.parse(stored.allPagesReadAt)) ? { allPagesReadAt: stored.allPagesReadAt } : {}),
		...(Object.keys(failingRooms).length > 0 ? { failingRooms } : {}),
		proposals: loadRoomProposals(stored.proposals),
	};
}

export const isOlderMessageState = (stored: MessageTriggerState | undefined, than: MessageTriggerState) => !stored || stored.seq < than.seq;

/** Writes a poll's state unless a newer one is stored already (another poll finished first). */
export function saveMessageState(staticData: IDataObject, polled: MessageTriggerState): void {
	const stored = loadMessageState(staticData);
	if (stored && stored.seq >= polled.seq) return;
	staticData.messages = polled as unknown as IDataObject;
}
