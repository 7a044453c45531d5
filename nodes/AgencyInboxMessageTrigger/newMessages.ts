import type { Mark } from '../shared/marks';
import { higherMark, isAfter, isWholeSecond, timeOf } from '../shared/marks';
import { pagesOf } from '../shared/pagination';
import type { LookBack } from './lateSync';
import { isLateNew, reachesFloor } from './lateSync';
import type { FetchStoriesPage, StoryRow } from './types';

/** Whether a story read is new: after the line, or found by the look-back, both placed in the room. */
function isNewIn(ids: ReadonlyMap<string, number>, after: Mark | null, lookBack: LookBack | undefined): (story: StoryRow) => boolean {
	const line = after && placeInRoom(after, ids);
	const placedBack = lookBack && { ...lookBack, floor: placeInRoom(lookBack.floor, ids) };
	return (story) => line === null || isAfter(line, story.storyId, story.createdAt) || (placedBack !== undefined && isLateNew(placedBack, story.storyId, story.createdAt));
}

/** Whether a page lists newer messages before older ones (the spec does not state the order). */
function isNewestFirst(page: StoryRow[]): boolean {
	return page.length >= 2 && timeOf(page[0].createdAt) > timeOf(page[page.length - 1].createdAt);
}

/**
 * A line as this room's messages place it. A line at a whole second may come from a row time cut to
 * the second (the history line), so it stands for a moment anywhere in it: where one of its ids is a
 * message of this room in that second, the room's line is that message's time (what the room held
 * when the row was read); else the start of the second, so nothing written later in it is taken as
 * read. A line at a moment below the second is kept as it is.
 */
export function placeInRoom(line: Mark, ids: ReadonlyMap<string, number>): Mark {
	if (!isWholeSecond(line.at)) return line;
	const start = timeOf(line.at);
	const inSecond = line.uids.map((uid) => ids.get(uid)).filter((ms): ms is number => ms !== undefined && ms >= start && ms < start + 1000);
	return inSecond.length === 0 ? line : { at: new Date(Math.max(...inSecond)).toISOString(), uids: line.uids };
}

export interface RoomRead {
	/** Messages after `after`, and those the look-back found below it, oldest first. */
	messages: StoryRow[];
	/** The newest message read in the room (any author), with the ids at its time. */
	newest: Mark | undefined;
	/** Every message the reading saw, also older ones: id → time (ms). */
	ids: ReadonlyMap<string, number>;
}

/**
 * The messages of a room created after `after` (null: all of them), and with a look-back the ones
 * below it that it has not read (lateSync.ts). Whatever order the service lists them in: a page that
 * lists newest first and reaches a message the mark has taken ends the reading (everything further
 * is older) once the look-back is done too (it reached its floor, or found as many messages as
 * `storiesCount` says were synced); in any other order every page is read. A line at a whole second
 * ends the reading only below its start, so every message of that second is read, and the line is
 * placed in the room (`placeInRoom`) once they are.
 */
export async function readMessagesAfter(fetchPage: FetchStoriesPage, roomId: string, after: Mark | null, lookBack?: LookBack): Promise<RoomRead> {
	// Found before the lines are placed in the room (a few more, never fewer): counted for the look-back only.
	const newer = new Map<string, StoryRow>();
	const read = new Map<string, StoryRow>();
	const ids = new Map<string, number>();
	let newest: Mark | undefined;
	let reachedTaken = false;
	let reachedFloor = lookBack === undefined;
	for await (const { page } of pagesOf((pageCursor) => fetchPage(roomId, pageCursor))) {
		const stories = (page.data ?? []).filter((story) => typeof story?.storyId === 'string' && !Number.isNaN(timeOf(story.createdAt)));
		for (const story of stories) {
			ids.set(story.storyId, timeOf(story.createdAt));
			read.set(story.storyId, story);
			newest = higherMark(newest, { at: story.createdAt, uids: [story.storyId] });
			if (after === null || isAfter(after, story.storyId, story.createdAt)) newer.set(story.storyId, story);
			else {
				reachedTaken = true;
				if (lookBack && isLateNew(lookBack, story.storyId, story.createdAt)) newer.set(story.storyId, story);
				if (lookBack && reachesFloor(lookBack, story.storyId, story.createdAt)) reachedFloor = true;
			}
		}
		const lookBackDone = reachedFloor || (lookBack?.expected !== undefined && newer.size >= lookBack.expected);
		if (reachedTaken && lookBackDone && isNewestFirst(stories)) break;
	}
	const messages = [...read.values()].filter(isNewIn(ids, after, lookBack)).sort((a, b) => timeOf(a.createdAt) - timeOf(b.createdAt));
	return { messages, newest, ids };
}
