import type { CanContinue } from '../shared/guardedPoll';
import type { Mark } from '../shared/marks';
import { higherMark, timeOf } from '../shared/marks';
import { nextCursorToFollow } from '../shared/pagination';
import { readMessagesAfter } from './newMessages';
import type { MessageTriggerState, RoomMark } from './state';
import { MAX_ROOMS_KEPT } from './state';
import type { FetchRoomsPage, FetchStoriesPage, LoadMemberIds, RoomRow, StoryRow } from './types';

export interface ClientMessage {
	room: RoomRow;
	story: StoryRow;
}

export interface MessagePollOutcome {
	state: MessageTriggerState;
	/** New messages by people who are not agency members, oldest first. */
	messages: ClientMessage[];
}

export interface MessageSources {
	fetchRooms: FetchRoomsPage;
	fetchStories: FetchStoriesPage;
	loadMemberIds: LoadMemberIds;
	canContinue: CanContinue;
}

const lastStoryIdOf = (room: RoomRow) => room.lastStoryId ?? room.lastStory?.storyId ?? null;

/** The latest time the row shows for the room's messages; null for a room without messages. */
function lastActivityOf(room: RoomRow): string | null {
	const times = [room.lastStoryAt, room.lastStory?.createdDateTime].filter((time): time is string => typeof time === 'string' && !Number.isNaN(timeOf(time)));
	if (times.length === 0) return null;
	return times.reduce((latest, time) => (timeOf(time) > timeOf(latest) ? time : latest));
}

/** The highest activity of a page of rooms, with the last message ids at that time. */
function topOf(rooms: RoomRow[]): Mark | undefined {
	let top: Mark | undefined;
	for (const room of rooms) {
		const at = lastActivityOf(room);
		const id = lastStoryIdOf(room);
		if (at !== null) top = higherMark(top, { at, uids: id === null ? [] : [id] });
	}
	return top;
}

/** Keeps the rooms the floor does not cover, at most MAX_ROOMS_KEPT, those read last first. */
function roomsToKeep(rooms: Record<string, RoomMark>, floor: Mark | null): Record<string, RoomMark> {
	const kept = Object.entries(rooms).filter(([, room]) => floor === null || timeOf(room.at) >= timeOf(floor.at));
	kept.sort(([, a], [, b]) => timeOf(b.at) - timeOf(a.at));
	return Object.fromEntries(kept.slice(0, MAX_ROOMS_KEPT));
}

/**
 * The first poll: the rooms of the first page and the highest time they show become the floor, so
 * nothing that exists now is emitted. Every message written later has a time at or after it.
 */
export async function bootstrapMessages(fetchRooms: FetchRoomsPage): Promise<MessageTriggerState> {
	const page = await fetchRooms(undefined);
	const rooms: Record<string, RoomMark> = {};
	for (const room of page.data ?? []) {
		const at = lastActivityOf(room);
		const last = lastStoryIdOf(room);
		if (at !== null) rooms[room.roomId] = { at, uids: last === null ? [] : [last], last };
	}
	const floor = topOf(page.data ?? []) ?? null;
	return { seq: 1, floor, rooms: roomsToKeep(rooms, floor) };
}

/**
 * One poll. The room list is sorted by a date that a new client message raises (the spec says only
 * "date": the time of the last message, or of the last client message): every room with a message
 * the trigger has not read is above every room whose messages are all older than the floor, so the
 * sweep reads rooms from the top until it meets one of those. A room whose last message is the one
 * read last time is skipped; any other room is read message by message, so two client messages in one
 * room between two polls both arrive although the row shows only the last.
 *
 * Only a complete sweep raises the floor, to the highest time on its FIRST page: those rows were read
 * before anything the sweep may have missed (a room that moved above the cursor while it paged got a
 * message after that first page was read, so later than the new floor).
 */
export async function pollMessages(state: MessageTriggerState, sources: MessageSources): Promise<MessagePollOutcome> {
	const rooms = { ...state.rooms };
	const messages: ClientMessage[] = [];
	let memberIds: ReadonlySet<string> | undefined;
	let firstPageTop: Mark | undefined;
	let complete = false;
	const cursorsUsed = new Set<string>();
	let cursor: string | undefined;
	sweep: do {
		const page = await sources.fetchRooms(cursor);
		const rows = (page.data ?? []).filter((room) => typeof room?.roomId === 'string');
		if (cursor === undefined) firstPageTop = topOf(rows);
		for (const room of rows) {
			const activity = lastActivityOf(room);
			if (activity === null) continue;
			if (state.floor !== null && timeOf(activity) < timeOf(state.floor.at)) {
				complete = true;
				break sweep;
			}
			const known = rooms[room.roomId];
			if (known && known.last !== null && known.last === lastStoryIdOf(room)) continue;
			const read = await readMessagesAfter(sources.fetchStories, room.roomId, known ?? state.floor);
			if (read.messages.length > 0) memberIds ??= await sources.loadMemberIds();
			for (const story of read.messages) if (!memberIds?.has(story.userId)) messages.push({ room, story });
			// Never past the messages actually read: the row may show a message the list does not yet.
			const newest = read.newest ? higherMark(known, read.newest) : known;
			if (newest) rooms[room.roomId] = { at: newest.at, uids: newest.uids, last: lastStoryIdOf(room) };
			if (!sources.canContinue()) break sweep;
		}
		cursor = nextCursorToFollow(page, cursorsUsed);
		if (cursor === undefined) complete = true;
		else cursorsUsed.add(cursor);
	} while (cursor !== undefined && sources.canContinue());

	const floor = complete && firstPageTop ? higherMark(state.floor ?? undefined, firstPageTop) : state.floor;
	messages.sort((a, b) => timeOf(a.story.createdAt) - timeOf(b.story.createdAt));
	return { state: { seq: state.seq + 1, floor, rooms: roomsToKeep(rooms, floor) }, messages };
}
