import type { Mark } from '../shared/marks';
import { higherMark, isAfter, timeOf } from '../shared/marks';
import { pagesOf } from '../shared/pagination';
import type { LookBack } from './lateSync';
import { isLateNew, reachesFloor } from './lateSync';
import type { FetchStoriesPage, StoryRow } from './types';

/** Whether a page lists newer messages before older ones (the spec does not state the order). */
function isNewestFirst(page: StoryRow[]): boolean {
	return page.length >= 2 && timeOf(page[0].createdAt) > timeOf(page[page.length - 1].createdAt);
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
 * `storiesCount` says were synced); in any other order every page is read.
 */
export async function readMessagesAfter(fetchPage: FetchStoriesPage, roomId: string, after: Mark | null, lookBack?: LookBack): Promise<RoomRead> {
	const newer = new Map<string, StoryRow>();
	const ids = new Map<string, number>();
	let newest: Mark | undefined;
	let reachedTaken = false;
	let reachedFloor = lookBack === undefined;
	for await (const { page } of pagesOf((pageCursor) => fetchPage(roomId, pageCursor))) {
		const stories = (page.data ?? []).filter((story) => typeof story?.storyId === 'string' && !Number.isNaN(timeOf(story.createdAt)));
		for (const story of stories) {
			ids.set(story.storyId, timeOf(story.createdAt));
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
	const messages = [...newer.values()].sort((a, b) => timeOf(a.createdAt) - timeOf(b.createdAt));
	return { messages, newest, ids };
}
