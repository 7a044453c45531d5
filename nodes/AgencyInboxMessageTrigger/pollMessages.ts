import type { Mark } from '../shared/marks';
import { higherMark, timeOf } from '../shared/marks';
import type { PageRead } from '../shared/pagination';
import { pagesOf, readListFrom } from '../shared/pagination';
import type { AgencyMember } from '../shared/roomPeople';
import { agencyMembersIn, isAgencyAuthor } from '../shared/roomPeople';
import { FailingRooms, loadFailingRooms } from './failingRooms';
import { evidenceAfterRead, lookBackOf, nextWindow, showsSyncSince, windowsWithinTotal } from './lateSync';
import { readMessagesAfter } from './newMessages';
import { inLastMessageOrder, lastActivityOf, lastStoryIdOf, mayStopBelow, rowIsAtOrBelow, rowsOf, topOf } from './roomListOrder';
import type { RoomProposalFinding, RoomProposalSources } from './roomProposal';
import type { ListEnd } from './roomSweep';
import { listStateAfter, newSweep, withPoll } from './roomSweep';
import { RoomProposals, WAIT_FOR_PROPOSALS } from './roomProposal';
import type { BackfillStep } from './backfill';
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
	/** Rooms whose messages are held back because they failed (failingRooms.ts). */
	notice?: string;
	/** Handed on by the backfill (Start From: A Date), not by the live polls. */
	backfilled?: boolean;
	/** What the backfill did not hand on, and why (backfill.ts). */
	backfillNotice?: string;
}

export interface MessagePollOutcome {
	state: MessageTriggerState;
	/** New messages by people who are not agency members, oldest first; then the backfill's, oldest first. */
	messages: ClientMessage[];
}

export interface MessageSources extends RoomProposalSources {
	fetchRooms: FetchRoomsPage;
	fetchStories: FetchStoriesPage;
	loadMembers: LoadMembers;
	/** The backfill's share of the poll (Start From: A Date, backfill.ts), after the live part, with the poll's proposals. */
	backfill?: (state: MessageTriggerState, proposals: RoomProposals) => Promise<BackfillStep>;
}

/**
 * However the rows of each poll look, a poll reads every page when the last sweep that did started this
 * long ago: what an early stop leaves unread (a message that reached the service late, its room listed
 * below the rows a poll reads) is read then, and a contradiction it shows ends the early stops until a
 * sweep reads every page without one.
 */
export const ALL_PAGES_AT_LEAST_EVERY_MS = 60 * 60_000;

/** The line a room without a mark is read after: the history line, or the highest mark dropped since. */
function unmarkedLineOf(state: Pick<MessageTriggerState, 'history' | 'forgotten'>): Mark | null {
	if (state.forgotten === undefined) return state.history;
	return state.history === null ? state.forgotten : higherMark(state.history, state.forgotten);
}

/**
 * Whether the row shows no last message the trigger has not read: for a room with a mark, the message
 * read last there at no later time than the newest one read (the time also counts: a service whose
 * data was reset reuses message ids, as the sandbox of npm start does); for a room without one, a last
 * message at or below the line it would be read after.
 */
function showsNoNewLast(room: RoomRow, mark: RoomMark | undefined, unmarkedLine: Mark | null): boolean {
	const activity = lastActivityOf(room);
	const lastShown = lastStoryIdOf(room);
	if (activity === null && lastShown === null) return true;
	if (mark) {
		const sameLast = lastShown === null || mark.last === lastShown;
		return sameLast && (activity === null || timeOf(activity) <= timeOf(mark.at));
	}
	return activity !== null && unmarkedLine !== null && rowIsAtOrBelow(unmarkedLine, lastShown ?? '', activity);
}

/** Whether the row shows nothing the trigger has not read: no new last message, and no message synced since behind it (lateSync.ts). */
export function showsNothingNew(room: RoomRow, mark: RoomMark | undefined, unmarkedLine: Mark | null): boolean {
	return showsNoNewLast(room, mark, unmarkedLine) && !(mark && showsSyncSince(room, mark));
}

/**
 * The rooms read most recently (by their newest message read), at most MAX_ROOMS_KEPT, and the highest
 * mark dropped. The marks of failing rooms are always kept: dropping one would raise `forgotten` over
 * messages of theirs not read yet. Their windows of ids read stay within MAX_IDS_KEPT (lateSync.ts).
 */
function roomsToKeep(rooms: Record<string, RoomMark>, forgotten: Mark | undefined, failing: Set<string>): { rooms: Record<string, RoomMark>; forgotten?: Mark } {
	const byRecency = Object.entries(rooms).sort(([, a], [, b]) => timeOf(b.at) - timeOf(a.at));
	const pinned = byRecency.filter(([roomId]) => failing.has(roomId));
	const others = byRecency.filter(([roomId]) => !failing.has(roomId));
	const spaceLeft = Math.max(0, MAX_ROOMS_KEPT - pinned.length);
	let highestDropped = forgotten;
	for (const [, dropped] of others.slice(spaceLeft)) highestDropped = higherMark(highestDropped, { at: dropped.at, uids: dropped.uids });
	return { rooms: windowsWithinTotal(Object.fromEntries([...pinned, ...others.slice(0, spaceLeft)])), ...(highestDropped ? { forgotten: highestDropped } : {}) };
}

/** Where a room without a mark that failed is read after when it recovers: the line of its first try (all its messages when that was null). */
const EVERY_MESSAGE: Mark = { at: new Date(0).toISOString(), uids: [] };

/** A read of pages of rooms: its rows, how it ended ('handled': at a page with a room with nothing new), and where to go on when cut. */
interface PagesRead {
	rows: RoomRow[];
	end: 'end' | 'stop' | 'cut' | 'handled';
	resumeAt?: string;
}

/**
 * One poll. It reads the room list from the top, page by page, and in each page every room whose row
 * shows something it has not read (`showsNothingNew`): a room with a mark after its mark, one without
 * after the history line, whatever the row's time, so a message that reached the service late (its time
 * below what earlier polls covered) still arrives. Each room is read message by message, so two client
 * messages in one room between two polls both arrive although the row shows only the last. A row
 * whose last message is read but whose `storiesCount` (or `lastSyncedAt`) moved holds a message
 * synced behind it: the room is read back below its mark (lateSync.ts). Such a row does not move up in
 * an order of the last message, so one below the rows an early stop reads is read by the poll that
 * reads every page (ALL_PAGES_AT_LEAST_EVERY_MS); it is no contradiction of that order.
 *
 * It stops paging before the end only on evidence from its own rows (`mayStopBelow`), not while
 * `mustReadAllPages` is set (a poll saw the list out of last-message order, or a room below the floor
 * with an unread message, and no sweep has read every page without seeing either since), and not when
 * no sweep has read every page for ALL_PAGES_AT_LEAST_EVERY_MS.
 *
 * A poll cut at its deadline leaves the sweep in progress (`state.sweep`): the next poll reads the top
 * as usual (in an order that moves with messages, what is new shows there) and, once a page shows a
 * room with nothing new (every room that moved since is above it), goes on from the saved cursor; a
 * cursor the service refuses (400) starts the sweep again from the top. So a sweep of P pages, where a
 * poll reads k, takes 1 + ceil((P - k) / (k - 1)) polls (each later poll spends a request on the top).
 * A sweep complete (at its end, or at an early stop) raises the floor to the highest time on the
 * first page of the poll that started it (roomSweep.ts): those rows were read at one moment, and
 * anything the sweep did not read got a message after it. A room that moved above the cursor while the
 * sweep paged is read by the next poll at the latest (it is above the floor then); a poll of several
 * pages that completes a sweep reads the first page again at the end to read it now, and keeps the
 * floor unless that page holds a room it has handled (every room that moved is above that one).
 *
 * A room whose read fails with a failure of its own (failingRooms.ts) holds back no other: it keeps
 * its mark and is retried with a backoff. The floor still rises past it: the failing rooms are kept by
 * id, so they need no floor to be found again, and one room failing for good does not pin the floor
 * (which would make every later poll read ever deeper). In exchange a poll does not stop early while
 * a room due for its next try (below the longest backoff) has not shown its row; one at the longest
 * backoff is retried by the poll that reads every page, hourly. Its unread messages below the floor
 * are known, so they are no contradiction of the list's order either. A room due whose row a sweep
 * that reached the end did not show counts as failed again: across the polls of a sweep, the ids of
 * the failing rooms whose rows it saw are kept for that.
 */
export async function pollMessages(state: MessageTriggerState, sources: MessageSources): Promise<MessagePollOutcome> {
	const rooms = { ...state.rooms };
	const proposals = new RoomProposals(state.proposals, sources);
	const messages: ClientMessage[] = [];
	const unmarkedLine = unmarkedLineOf(state);
	const startedAt = sources.now();
	const allPagesDue = state.allPagesReadAt === undefined || startedAt - timeOf(state.allPagesReadAt) >= ALL_PAGES_AT_LEAST_EVERY_MS;
	const failing = new FailingRooms(loadFailingRooms(state.failingRooms), startedAt, allPagesDue);
	let members: AgencyMember[] | undefined;
	let unreadLastMessage = false;
	let sawUnreadBelowFloor = false;
	const rowsRead = new Set<string>();

	/** Reads one room's new messages, and its proposal where a client wrote; false when the room failed. */
	async function readRoom(room: RoomRow, known: RoomMark | undefined): Promise<boolean> {
		const lookBack = lookBackOf(room, known, state.history);
		const read = await failing.attempt(room.roomId, async () => await readMessagesAfter(sources.fetchStories, room.roomId, known ?? unmarkedLine, lookBack));
		if (!read) return false;
		if (read.messages.length > 0) members ??= await sources.loadMembers();
		const fromClients = read.messages.filter((story) => !isAgencyAuthor(story, room, members ?? []));
		if (fromClients.length > 0) {
			const proposal = await failing.attempt(room.roomId, async () => await proposals.of(room));
			if (!proposal) return false;
			if (proposal === WAIT_FOR_PROPOSALS) {
				// The next poll reads the room again: its mark stays, and so does the floor.
				failing.recovered(room.roomId);
				unreadLastMessage = true;
				return false;
			}
			const agencyMembers = agencyMembersIn(room, members ?? []);
			for (const story of fromClients) messages.push({ room, story, proposal, agencyMembers });
		}
		failing.recovered(room.roomId);
		const lastShown = lastStoryIdOf(room);
		const newest = read.newest ? higherMark(known, read.newest) : known;
		// The row may show a message the room's list does not return yet: then the room is read again
		// next time, and the floor stays, so that message is not taken as read.
		const lastRead = lastShown !== null && read.ids.has(lastShown);
		if (!lastRead) unreadLastMessage = true;
		const window = nextWindow(known, lookBack?.floor ?? unmarkedLine ?? EVERY_MESSAGE, read.ids);
		const last = lastRead ? lastShown : (known?.last ?? null);
		if (newest) rooms[room.roomId] = { at: newest.at, uids: newest.uids, last, ...evidenceAfterRead(room, known, lastRead), ...window };
		return true;
	}

	/** A failing room keeps the line it is read after: one without a mark gets a mark at the line it had. */
	function keepLineOf(roomId: string): void {
		const line = unmarkedLine ?? EVERY_MESSAGE;
		rooms[roomId] ??= { at: line.at, uids: [...line.uids], last: null };
	}

	/** Reads the rooms of one page that show something new; says whether it met a room with nothing new. */
	async function readRooms(rows: RoomRow[]): Promise<{ reachedHandled: boolean; outOfTime: boolean }> {
		let reachedHandled = false;
		for (const room of rows) {
			failing.rowRead(room.roomId);
			rowsRead.add(room.roomId);
			if (failing.isHeldBack(room.roomId)) continue;
			const known = rooms[room.roomId];
			if (showsNothingNew(room, known, unmarkedLine)) {
				failing.recovered(room.roomId);
				reachedHandled ||= lastActivityOf(room) !== null || lastStoryIdOf(room) !== null;
				continue;
			}
			// A row that shows only a sync behind its last message did not move in an order of the last message: no contradiction.
			const activity = lastActivityOf(room);
			const belowFloor = activity !== null && state.floor !== null && timeOf(activity) < timeOf(state.floor.at);
			if (belowFloor && !failing.has(room.roomId) && !showsNoNewLast(room, known, unmarkedLine)) sawUnreadBelowFloor = true;
			if (!(await readRoom(room, known))) keepLineOf(room.roomId);
			if (!sources.canContinue()) return { reachedHandled, outOfTime: true };
		}
		return { reachedHandled, outOfTime: false };
	}

	/** Whether this poll must read on to the list's end: no early stop, whatever its rows show. */
	const mustReadOn = () => allPagesDue || state.mustReadAllPages || sawUnreadBelowFloor || failing.awaitsItsRow();
	let firstPageTop: Mark | undefined;
	let pages = 0;

	/**
	 * Reads pages of rooms from `pageCursor` (none: the top) until the list ends, the rows read show
	 * that an early stop is safe, the deadline comes, or (`untilHandled`) a page shows a room with
	 * nothing new. Cut in the middle of a page, it goes on from that page next time.
	 */
	async function readPages(pageCursor: string | undefined, list: AsyncGenerator<PageRead<Page<RoomRow>>>, untilHandled: boolean): Promise<PagesRead> {
		const rows: RoomRow[] = [];
		for await (const { page, next } of list) {
			const pageRows = rowsOf(page);
			if (pages++ === 0) firstPageTop = topOf(pageRows);
			rows.push(...pageRows);
			const read = await readRooms(pageRows);
			if (read.outOfTime) return { rows, end: 'cut', resumeAt: pageCursor };
			if (next === undefined) return { rows, end: 'end' };
			if (!mustReadOn() && state.floor !== null && mayStopBelow([rows], state.floor)) return { rows, end: 'stop' };
			if (!sources.canContinue()) return { rows, end: 'cut', resumeAt: next };
			if (untilHandled && read.reachedHandled) return { rows, end: 'handled' };
			pageCursor = next;
		}
		return { rows, end: 'end' };
	}

	// The top first: in an order that moves with messages, what is new since the last poll shows there.
	const saved = state.sweep;
	const top = await readPages(undefined, pagesOf(sources.fetchRooms), saved !== undefined);
	const reads = [top.rows];
	let last: PagesRead = top;
	let restarted = false;
	if (saved && top.end === 'handled') {
		// Every room that moved since the last poll is above the room with nothing new: on from the saved cursor.
		last = await readListFrom(sources.fetchRooms, saved.cursor, async (list, restarts) => {
			restarted = restarts > 0;
			return await readPages(restarted ? undefined : saved.cursor, list, false);
		});
		reads.push(last.rows);
	}
	const goesOn = saved !== undefined && !restarted && (top.end === 'handled' || top.end === 'cut');

	let complete = last.end === 'end' || last.end === 'stop';
	if (complete && pages > 1) {
		const again = rowsOf(await sources.fetchRooms(undefined));
		reads.push(again);
		complete = (await readRooms(again)).reachedHandled;
	}
	const contradiction = sawUnreadBelowFloor || !inLastMessageOrder(reads);
	const failingRowsSeen = [...new Set([...(goesOn ? saved.failingRowsSeen : []), ...rowsRead])];
	if (last.end === 'end') {
		for (const roomId of failingRowsSeen) failing.rowRead(roomId);
		failing.notListed();
	}
	const failingIds = failing.ids();
	const sweep = withPoll(goesOn ? saved : newSweep(startedAt, firstPageTop), {
		unreadLastMessage,
		contradiction,
		failingRowsSeen: failingRowsSeen.filter((roomId) => failingIds.has(roomId)),
	});
	const listEnd: ListEnd = last.end === 'end' || last.end === 'stop' ? { end: last.end } : { end: 'cut', resumeAt: goesOn && top.end === 'cut' ? saved.cursor : last.resumeAt };
	messages.sort((a, b) => timeOf(a.story.createdAt) - timeOf(b.story.createdAt));
	const notice = failing.notice();
	if (notice) for (const message of messages) message.notice = notice;
	const backfill = sources.backfill ? await sources.backfill(state, proposals) : { backfill: state.backfill, messages: [] };
	return {
		state: {
			seq: state.seq + 1,
			history: state.history,
			...roomsToKeep(rooms, state.forgotten, failingIds),
			...listStateAfter(state, { sweep, listEnd, complete }),
			...failing.state(),
			proposals: await proposals.advance(),
			...(backfill.backfill ? { backfill: backfill.backfill } : {}),
			...(state.historyFromFloor ? { historyFromFloor: true } : {}),
		},
		// The live messages first: what a client writes now never waits behind the history.
		messages: [...messages, ...backfill.messages],
	};
}
