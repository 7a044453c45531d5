import type { IDataObject } from 'n8n-workflow';

import type { Mark } from '../shared/marks';
import { isMark } from '../shared/marks';
import type { RoomProposalsState } from './roomProposal';
import { loadRoomProposals } from './roomProposal';

/** What the trigger last read of one room: its newest message (any author) and the room's lastStoryId then. */
export interface RoomMark extends Mark {
	last: string | null;
}

export interface MessageTriggerState {
	/** Counts the polls that moved the state on: which of two states is newer. */
	seq: number;
	/**
	 * Every message created before `floor.at`, and the ones listed at it, was emitted or is history.
	 * Null when the inbox was empty at activation: then no message is history.
	 */
	floor: Mark | null;
	/** Rooms with a message at or after the floor; older rooms are covered by the floor alone. */
	rooms: Record<string, RoomMark>;
	/**
	 * Whether the room list has shown it is not in order of creation, so a new message moves its room
	 * up and a sweep may stop at the first room below the floor. Until then every sweep reads every page.
	 */
	roomsMoveOnMessages: boolean;
	/** The rooms' proposals: the index by chatRoomId and the lookups made while the full pass goes on (roomProposal.ts). */
	proposals: RoomProposalsState;
}

/** Most rooms kept; past it the rooms read longest ago are dropped (a dropped room is judged by the floor). */
export const MAX_ROOMS_KEPT = 2_000;

const isRoomMark = (value: unknown): value is RoomMark =>
	isMark(value) && ((value as RoomMark).last === null || typeof (value as RoomMark).last === 'string');

export function loadMessageState(staticData: IDataObject): MessageTriggerState | undefined {
	const stored = staticData.messages as unknown as Partial<MessageTriggerState> | undefined;
	if (!stored || typeof stored.seq !== 'number' || stored.floor === undefined || (stored.floor !== null && !isMark(stored.floor))) return undefined;
	const rooms = Object.fromEntries(Object.entries(stored.rooms ?? {}).filter(([, room]) => isRoomMark(room)));
	return { seq: stored.seq, floor: stored.floor, rooms, roomsMoveOnMessages: stored.roomsMoveOnMessages === true, proposals: loadRoomProposals(stored.proposals) };
}

export const isOlderMessageState = (stored: MessageTriggerState | undefined, than: MessageTriggerState) => !stored || stored.seq < than.seq;

/** Writes a poll's state unless a newer one is stored already (another poll finished first). */
export function saveMessageState(staticData: IDataObject, polled: MessageTriggerState): void {
	const stored = loadMessageState(staticData);
	if (stored && stored.seq >= polled.seq) return;
	staticData.messages = polled as unknown as IDataObject;
}
