import type { CanContinue } from '../shared/guardedPoll';
import type { Mark } from '../shared/marks';
import { higherMark, timeOf } from '../shared/marks';
import { pagesOf } from '../shared/pagination';
import type { AgencyMember } from '../shared/roomPeople';
import { agencyMembersIn, isAgencyAuthor } from '../shared/roomPeople';
import { readMessagesAfter } from './newMessages';
import type { RoomProposalFinding, RoomProposalSources } from './roomProposal';
import { RoomProposals } from './roomProposal';
import type { MessageTriggerState, RoomMark } from './state';
import { MAX_ROOMS_KEPT } from './state';
import type { FetchRoomsPage, FetchStoriesPage, LoadMembers, Page, RoomRow, StoryRow } from './types';

export interface ClientMessage {
	room: RoomRow;
	story: StoryRow;
	/** The room's proposals as far as the trigger knows them (roomProposal.ts). */
	proposal: RoomProposalFinding;
	/** The agency members taking part in the room. */
	agencyMembers: AgencyMember[];
}

export interface MessagePollOutcome {
	state: MessageTriggerState;
	/** New messages by people who are not agency members, oldest first. */
	messages: ClientMessage[];
}

export interface MessageSources extends RoomProposalSources {
	fetchRooms: FetchRoomsPage;
	fetchStories: FetchStoriesPage;
	loadMembers: LoadMembers;
	canContinue: CanContinue;
}

const lastStoryIdOf = (room: RoomRow) => room.lastStoryId ?? room.lastStory?.storyId ?? null;

/** The latest time the row shows for the room's messages; null when it shows none. */
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

/**
 * Whether the rows show that the list is not in order of creation: a room created earlier listed above
 * one created later. The spec sorts rooms by an unnamed "date"; this rules out the one reading under
 * which a new message does not move its room up (creation time).
 */
export function contradictsCreationOrder(rows: RoomRow[]): boolean {
	const created = rows.map((room) => timeOf(room.createdAtDateTime ?? '')).filter((time) => !Number.isNaN(time));
	return created.some((time, index) => index > 0 && created[index - 1] < time);
}

/** Keeps the rooms the floor does not cover, at most MAX_ROOMS_KEPT, those read last first. */
function roomsToKeep(rooms: Record<string, RoomMark>, floor: Mark | null): Record<string, RoomMark> {
	const kept = Object.entries(rooms).filter(([, room]) => floor === null || timeOf(room.at) >= timeOf(floor.at));
	kept.sort(([, a], [, b]) => timeOf(b.at) - timeOf(a.at));
	return Object.fromEntries(kept.slice(0, MAX_ROOMS_KEPT));
}

const rowsOf = (page: Page<RoomRow>) => (page.data ?? []).filter((room) => typeof room?.roomId === 'string');

/**
 * The first poll: nothing that exists now is emitted. The floor is the highest time of the first page
 * with a message: every message written later has a time at or after it. Each room read gets its mark
 * (its last message), so a room further down whose last message is above the floor is not taken for
 * new. Until the list has shown it is sorted by a date new messages raise, every page is read: in order
 * of creation, a room far down may hold the newest message. A floor of null: no room has a message.
 */
export async function bootstrapMessages(fetchRooms: FetchRoomsPage): Promise<MessageTriggerState> {
	const rooms: Record<string, RoomMark> = {};
	let floor: Mark | undefined;
	let roomsMoveOnMessages = false;
	let rowAbove: RoomRow[] = [];
	for await (const { page } of pagesOf(fetchRooms)) {
		const rows = rowsOf(page);
		for (const room of rows) {
			const at = lastActivityOf(room);
			const last = lastStoryIdOf(room);
			if (at !== null) rooms[room.roomId] = { at, uids: last === null ? [] : [last], last };
		}
		floor ??= topOf(rows);
		roomsMoveOnMessages ||= contradictsCreationOrder([...rowAbove, ...rows]);
		rowAbove = rows.slice(-1);
		if (floor && roomsMoveOnMessages) break;
	}
	return { seq: 1, floor: floor ?? null, rooms: roomsToKeep(rooms, floor ?? null), roomsMoveOnMessages, proposals: {} };
}

/**
 * One poll. Once the list has shown that it is sorted by a date a new client message raises (the last
 * message, or the last client message), every room with a message the trigger has not read is above
 * every room whose messages are all older than the floor, so the sweep stops at the first of those.
 * Before that it reads every page and skips such rooms. A room whose last message is the one read
 * last time is skipped; any other room is read message by message, so two client messages in one room
 * between two polls both arrive although the row shows only the last.
 *
 * A complete sweep raises the floor to the highest time on its first page: those rows were read at
 * one moment, and anything the sweep did not read got a message after it. One exception: a room that
 * moved above the cursor while the sweep paged also holds its older messages, which nobody read. So a
 * sweep of several pages ends by reading the first page again, down to a room it has handled: every
 * room that moved is above that one. If the page holds no such room, the floor stays.
 */
export async function pollMessages(state: MessageTriggerState, sources: MessageSources): Promise<MessagePollOutcome> {
	const rooms = { ...state.rooms };
	const proposals = new RoomProposals(state.proposals, sources);
	const messages: ClientMessage[] = [];
	let members: AgencyMember[] | undefined;
	let unreadLastMessage = false;
	let roomsMoveOnMessages = state.roomsMoveOnMessages;

	/** Reads the rooms of one page in order; says whether it reached a room below the floor or one already handled. */
	async function readRooms(rows: RoomRow[]): Promise<{ belowFloor: boolean; reachedHandled: boolean; outOfTime: boolean }> {
		let reachedHandled = false;
		for (const room of rows) {
			const activity = lastActivityOf(room);
			const lastShown = lastStoryIdOf(room);
			if (activity === null && lastShown === null) continue;
			if (activity !== null && state.floor !== null && timeOf(activity) < timeOf(state.floor.at)) {
				if (roomsMoveOnMessages) return { belowFloor: true, reachedHandled: true, outOfTime: false };
				reachedHandled = true;
				continue;
			}
			const known = rooms[room.roomId];
			// Handled: the row shows the message read last, at no later time than the newest one read. The
			// time also counts: a service whose data was reset reuses message ids (the sandbox of npm start).
			if (known && known.last !== null && known.last === lastShown && (activity === null || timeOf(activity) <= timeOf(known.at))) {
				reachedHandled = true;
				continue;
			}
			const read = await readMessagesAfter(sources.fetchStories, room.roomId, known ?? state.floor);
			if (read.messages.length > 0) members ??= await sources.loadMembers();
			const fromClients = read.messages.filter((story) => !isAgencyAuthor(story, room, members ?? []));
			if (fromClients.length > 0) {
				const proposal = await proposals.of(room);
				const agencyMembers = agencyMembersIn(room, members ?? []);
				for (const story of fromClients) messages.push({ room, story, proposal, agencyMembers });
			}
			const newest = read.newest ? higherMark(known, read.newest) : known;
			// The row may show a message the room's list does not return yet: then the room is read again
			// next time, and the floor stays, so that message is not taken as read.
			const lastRead = lastShown !== null && read.ids.has(lastShown);
			if (!lastRead) unreadLastMessage = true;
			if (newest) rooms[room.roomId] = { at: newest.at, uids: newest.uids, last: lastRead ? lastShown : (known?.last ?? null) };
			if (!sources.canContinue()) return { belowFloor: false, reachedHandled, outOfTime: true };
		}
		return { belowFloor: false, reachedHandled, outOfTime: false };
	}

	let firstPageTop: Mark | undefined;
	let pages = 0;
	let complete = false;
	let rowAbove: RoomRow[] = [];
	for await (const { page, next } of pagesOf(sources.fetchRooms)) {
		const rows = rowsOf(page);
		if (pages++ === 0) firstPageTop = topOf(rows);
		roomsMoveOnMessages ||= contradictsCreationOrder([...rowAbove, ...rows]);
		rowAbove = rows.slice(-1);
		const read = await readRooms(rows);
		if (read.outOfTime) break;
		if (read.belowFloor || next === undefined) {
			complete = true;
			break;
		}
		if (!sources.canContinue()) break;
	}

	if (complete && pages > 1) complete = (await readRooms(rowsOf(await sources.fetchRooms(undefined)))).reachedHandled;
	const floor = complete && !unreadLastMessage && firstPageTop ? higherMark(state.floor ?? undefined, firstPageTop) : state.floor;
	messages.sort((a, b) => timeOf(a.story.createdAt) - timeOf(b.story.createdAt));
	return { state: { seq: state.seq + 1, floor, rooms: roomsToKeep(rooms, floor), roomsMoveOnMessages, proposals: await proposals.advance() }, messages };
}
