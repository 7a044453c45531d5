/**
 * The Message Trigger's backfill (Start From: A Date): the client messages written from the date up to
 * the activation's history line. Time decides who hands a message on: the live polls never read at or
 * below the history line (a room without a mark is read after it, a look-back never reaches below it),
 * and the backfill never above it, placed in each room as the live polls place it (`placeInRoom`).
 *
 * A pass sweeps the room list ordered by date ascending, page by page, and reads every room whose row
 * shows a message at or after the date (or no time at all) that it has not handed on yet: each room once,
 * its client messages in range oldest first. Rooms are kept by id once handed on, so a room met again
 * (the list moved, a cursor was refused and the sweep started over) is not read again. A sweep that read
 * a room is followed by another, which must read none: a room that moved past the cursor while the sweep
 * paged (the spec does not name the date it sorts by, nor say that a cursor is a key) is read by it.
 *
 * Each poll works on the pass after the live part, with at most BACKFILL_REQUESTS_PER_POLL requests
 * begun and BACKFILL_RUN_SIZE messages handed on; a room with more messages than a run takes is handed
 * on over several polls (`partial`). Its progress is saved with the trigger's state, so it is committed
 * with the execution that carries its messages, and a restart goes on from there.
 */
import type { CanContinue } from '../shared/guardedPoll';
import type { Mark } from '../shared/marks';
import { isAfter, isMark, timeOf } from '../shared/marks';
import { pagesOf, readListFrom } from '../shared/pagination';
import type { AgencyMember } from '../shared/roomPeople';
import { agencyMembersIn, isAgencyAuthor } from '../shared/roomPeople';
import type { BackfillLedger, BackfillPass, StartDate } from '../shared/startFrom';
import { BACKFILL_RUN_SIZE, ledgerAfterPass, loadLedger, passFor, withinPass } from '../shared/startFrom';
import { isRoomFailure } from './failingRooms';
import { placeInRoom } from './newMessages';
import type { ClientMessage } from './pollMessages';
import type { RoomProposals } from './roomProposal';
import { WAIT_FOR_PROPOSALS } from './roomProposal';
import { lastActivityOf, rowsOf } from './roomListOrder';
import type { MessageTriggerState } from './state';
import type { FetchRoomsPage, FetchStoriesPage, LoadMembers, RoomRow, StoryRow } from './types';

/** Requests the backfill may begin in one poll: a quarter of the default budget of 20 a minute, the rest left to the live part. */
export const BACKFILL_REQUESTS_PER_POLL = 5;
/** Reads in a row of a room that may fail with a failure of its own before the pass leaves it out (and says so on its items). */
export const BACKFILL_ROOM_TRIES = 3;

export interface MessageBackfillProgress {
	/** Rooms whose messages within the pass are handed on. */
	done: string[];
	/** The page of the room list the sweep reads next; absent: the top. */
	cursor?: string;
	/** Whether the sweep under way read a room: then another sweep follows, which must read none. */
	sweepReadRooms: boolean;
	/** Rooms handed on in part (a run filled up within them): the last message handed on. */
	partial: Record<string, Mark>;
	/** Rooms whose read failed with a failure of their own, with the reads in a row that did. */
	failing: Record<string, number>;
	/** Rooms left out after BACKFILL_ROOM_TRIES failed reads, with the last failure. */
	leftOut: Record<string, string>;
}

export type MessageBackfill = BackfillLedger<MessageBackfillProgress>;

const freshProgress = (): MessageBackfillProgress => ({ done: [], sweepReadRooms: false, partial: {}, failing: {}, leftOut: {} });

const isStringMap = (value: unknown, isEntry: (entry: unknown) => boolean) =>
	typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every(isEntry);

function isProgress(value: unknown): value is MessageBackfillProgress {
	const progress = value as MessageBackfillProgress | undefined;
	return (
		Array.isArray(progress?.done) &&
		progress.done.every((roomId) => typeof roomId === 'string') &&
		(progress.cursor === undefined || typeof progress.cursor === 'string') &&
		typeof progress.sweepReadRooms === 'boolean' &&
		isStringMap(progress.partial, isMark) &&
		isStringMap(progress.failing, (tries) => typeof tries === 'number') &&
		isStringMap(progress.leftOut, (reason) => typeof reason === 'string')
	);
}

export const loadMessageBackfill = (value: unknown): MessageBackfill | undefined => loadLedger(value, isProgress);

export interface BackfillSources {
	canContinue: CanContinue;
	/** The room list ordered by date ascending (`sort=date-asc`). */
	fetchRoomsAscending: FetchRoomsPage;
	fetchStories: FetchStoriesPage;
	loadMembers: LoadMembers;
}

/** Whether a row may show a room with a message at or after `fromMs`: its last message is not older (a time cut to the second may stand for any moment of it). */
export function mayHoldSince(room: RoomRow, fromMs: number): boolean {
	const activity = lastActivityOf(room);
	if (activity === null) return true;
	const ms = timeOf(activity);
	return ms + (ms % 1000 === 0 ? 999 : 0) >= fromMs;
}

/** Every message of a room, whatever order and pages the service lists them in. */
async function readWholeRoom(fetchStories: FetchStoriesPage, roomId: string, onRequest: () => void): Promise<StoryRow[]> {
	const stories = new Map<string, StoryRow>();
	for await (const { page } of pagesOf(async (pageCursor: string | undefined) => {
		onRequest();
		return await fetchStories(roomId, pageCursor);
	})) {
		for (const story of page.data ?? []) if (typeof story?.storyId === 'string' && !Number.isNaN(timeOf(story.createdAt))) stories.set(story.storyId, story);
	}
	return [...stories.values()];
}

/** The room's messages the pass owns (within its range, at or below the history line placed in the room), after `after`, oldest first. */
export function messagesOwned(stories: StoryRow[], pass: Pick<BackfillPass<unknown>, 'from' | 'to'>, history: Mark, after: Mark | undefined): StoryRow[] {
	const line = placeInRoom(history, new Map(stories.map((story) => [story.storyId, timeOf(story.createdAt)])));
	return stories
		.filter((story) => withinPass(pass, timeOf(story.createdAt)) && !isAfter(line, story.storyId, story.createdAt))
		.filter((story) => after === undefined || isAfter(after, story.storyId, story.createdAt))
		.sort((a, b) => timeOf(a.createdAt) - timeOf(b.createdAt) || a.storyId.localeCompare(b.storyId));
}

/** A mark at a message: what `partial` keeps of the last one handed on. */
const markAt = (story: StoryRow, before: Mark | undefined): Mark =>
	before !== undefined && timeOf(before.at) === timeOf(story.createdAt) ? { at: story.createdAt, uids: [...before.uids, story.storyId] } : { at: story.createdAt, uids: [story.storyId] };

/** Why a room's read failed, for the items' notice (the pipeline's errors carry no credentials). */
const failureText = (error: unknown) => (error instanceof Error ? error.message : String(error)).slice(0, 200);

/** One page of the sweep from `cursor`; a cursor the service refuses (400) starts the sweep over at the top (`restarted`). */
async function readSweepPage(fetchRooms: FetchRoomsPage, cursor: string | undefined, onRequest: () => void): Promise<{ rows: RoomRow[]; next?: string; restarted: boolean }> {
	return await readListFrom(fetchRooms, cursor, async (pages, restarts) => {
		for await (const { page, next } of pages) {
			onRequest();
			return { rows: rowsOf(page), next, restarted: restarts > 0 };
		}
		return { rows: [], restarted: restarts > 0 };
	});
}

/** The backfill's share of one poll: the ledger to keep, and the messages it hands on. */
export interface BackfillStep {
	backfill: MessageBackfill | undefined;
	messages: ClientMessage[];
}

/**
 * One poll's share of the backfill for `date` (undefined: Start From is Now, the pass waits). Its
 * messages are marked `backfilled`; where the pass hands on less than the date asks for, or left a
 * room out, they carry `backfillNotice`.
 */
export async function stepMessageBackfill(state: MessageTriggerState, date: StartDate | undefined, sources: BackfillSources, proposals: RoomProposals): Promise<BackfillStep> {
	const unchanged = { backfill: state.backfill, messages: [] };
	if (date === undefined) return unchanged;
	const pass = passFor(state.backfill, date, freshProgress);
	if (pass === undefined) return unchanged;
	const history = state.history;
	// An inbox empty at the activation holds nothing written before it.
	if (history === null) return { ...unchanged, backfill: ledgerAfterPass(state.backfill, pass) };

	const progress: MessageBackfillProgress = JSON.parse(JSON.stringify(pass.progress)) as MessageBackfillProgress;
	const done = new Set(progress.done);
	const fromMs = Date.parse(pass.from);
	const messages: ClientMessage[] = [];
	let requests = 0;
	let members: AgencyMember[] | undefined;
	const onRequest = () => {
		requests++;
	};
	const mayGoOn = () => requests < BACKFILL_REQUESTS_PER_POLL && messages.length < BACKFILL_RUN_SIZE && sources.canContinue();

	/** Hands on the room's messages the pass owns; false when the poll's share ended within the room (it is read again next time). */
	async function handOn(room: RoomRow): Promise<boolean> {
		const stories = await readWholeRoom(sources.fetchStories, room.roomId, onRequest);
		progress.sweepReadRooms = true;
		const owned = messagesOwned(stories, pass!, history!, progress.partial[room.roomId]);
		if (owned.length > 0 && members === undefined) {
			onRequest();
			members = await sources.loadMembers();
		}
		const fromClients = owned.filter((story) => !isAgencyAuthor(story, room, members ?? []));
		if (fromClients.length > 0) {
			const proposal = await proposals.of(room);
			if (proposal === WAIT_FOR_PROPOSALS) return false;
			const taken = fromClients.slice(0, BACKFILL_RUN_SIZE - messages.length);
			const agencyMembers = agencyMembersIn(room, members ?? []);
			for (const story of taken) messages.push({ room, story, proposal, agencyMembers, backfilled: true });
			if (taken.length < fromClients.length) {
				progress.partial[room.roomId] = markAt(taken[taken.length - 1], progress.partial[room.roomId]);
				return false;
			}
		}
		delete progress.partial[room.roomId];
		done.add(room.roomId);
		return true;
	}

	/**
	 * Reads one room for the pass. A failure of the room's own (isRoomFailure) is counted, and past
	 * BACKFILL_ROOM_TRIES the room is left out; any other failure (the key, the rate limit, the network)
	 * ends this poll's share, keeping what it handed on, and the next poll reads the room again.
	 */
	async function attempt(room: RoomRow): Promise<'read' | 'wait' | 'failed'> {
		try {
			const whole = await handOn(room);
			delete progress.failing[room.roomId];
			return whole ? 'read' : 'wait';
		} catch (error) {
			if (!isRoomFailure(error)) return 'wait';
			const tries = (progress.failing[room.roomId] ?? 0) + 1;
			if (tries < BACKFILL_ROOM_TRIES) {
				progress.failing[room.roomId] = tries;
				return 'failed';
			}
			delete progress.failing[room.roomId];
			delete progress.partial[room.roomId];
			progress.leftOut[room.roomId] = failureText(error);
			done.add(room.roomId);
			return 'read';
		}
	}

	let complete = false;
	sweep: while (mayGoOn()) {
		const page = await readSweepPage(sources.fetchRoomsAscending, progress.cursor, onRequest).catch(() => undefined);
		// The list failed (the live part shows why): the next poll reads this page again.
		if (page === undefined) break;
		const { rows, next, restarted } = page;
		if (restarted) progress.cursor = undefined;
		let failedOnPage = false;
		for (const room of rows) {
			if (done.has(room.roomId) || !mayHoldSince(room, fromMs)) continue;
			if (!mayGoOn()) break sweep;
			const outcome = await attempt(room);
			if (outcome === 'wait') break sweep;
			// A failing room holds back no other: the sweep goes on, and a sweep follows that reads it again.
			if (outcome === 'failed') failedOnPage = true;
		}
		if (failedOnPage) progress.sweepReadRooms = true;
		if (next !== undefined) {
			progress.cursor = next;
			continue;
		}
		if (!progress.sweepReadRooms) {
			complete = true;
			break;
		}
		progress.cursor = undefined;
		progress.sweepReadRooms = false;
	}

	const leftOut = Object.keys(progress.leftOut);
	const notice = [
		pass.notice,
		leftOut.length > 0 ? `The backfill could not read ${leftOut.length} room(s) and left them out: ${leftOut.map((roomId) => `${roomId} (${progress.leftOut[roomId]})`).join('; ')}.` : undefined,
	]
		.filter(Boolean)
		.join(' ');
	messages.sort((a, b) => timeOf(a.story.createdAt) - timeOf(b.story.createdAt));
	if (notice) for (const message of messages) message.backfillNotice = notice;
	const after: BackfillPass<MessageBackfillProgress> = { ...pass, progress: { ...progress, done: [...done] } };
	return { backfill: complete ? ledgerAfterPass(state.backfill, after) : { ...state.backfill, pass: after }, messages };
}

/** Rooms Fetch Test Event reads at most for a backfilled message. */
const SAMPLE_ROOMS_READ = 5;

/**
 * Fetch Test Event with a date: the oldest client message since it in the first rooms of the ascending
 * list that may hold one, as the backfill would hand it on (no proposal read; up to now, as no history
 * line exists yet).
 */
export async function sampleBackfilledMessage(
	date: StartDate,
	nowMs: number,
	sources: Pick<BackfillSources, 'fetchRoomsAscending' | 'fetchStories' | 'loadMembers'>,
	notRead: ClientMessage['proposal'],
): Promise<ClientMessage | undefined> {
	const rooms = rowsOf(await sources.fetchRoomsAscending(undefined)).filter((room) => mayHoldSince(room, date.ms)).slice(0, SAMPLE_ROOMS_READ);
	if (rooms.length === 0) return undefined;
	const members = await sources.loadMembers();
	const now: Mark = { at: new Date(nowMs).toISOString(), uids: [] };
	for (const room of rooms) {
		const stories = await readWholeRoom(sources.fetchStories, room.roomId, () => undefined);
		const story = messagesOwned(stories, { from: date.iso }, now, undefined).find((owned) => !isAgencyAuthor(owned, room, members));
		if (story) return { room, story, proposal: notRead, agencyMembers: agencyMembersIn(room, members), backfilled: true };
	}
	return undefined;
}
