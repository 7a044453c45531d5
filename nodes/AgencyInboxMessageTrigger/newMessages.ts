import type { Mark } from '../shared/marks';
import { higherMark, isAfter, timeOf } from '../shared/marks';
import { pagesOf } from '../shared/pagination';
import type { FetchStoriesPage, StoryRow } from './types';

/** Whether a page lists newer messages before older ones (the spec does not state the order). */
function isNewestFirst(page: StoryRow[]): boolean {
	return page.length >= 2 && timeOf(page[0].createdAt) > timeOf(page[page.length - 1].createdAt);
}

export interface RoomRead {
	/** Messages after `after`, oldest first. */
	messages: StoryRow[];
	/** The newest message read in the room (any author), with the ids at its time. */
	newest: Mark | undefined;
	/** Every message the reading saw, also older ones. */
	ids: ReadonlySet<string>;
}

/**
 * The messages of a room created after `after` (null: all of them). Whatever order the service lists
 * them in: a page that lists newest first and reaches a message the mark has taken ends the reading
 * (everything further is older); in any other order every page is read.
 */
export async function readMessagesAfter(fetchPage: FetchStoriesPage, roomId: string, after: Mark | null): Promise<RoomRead> {
	const newer = new Map<string, StoryRow>();
	const ids = new Set<string>();
	let newest: Mark | undefined;
	for await (const { page } of pagesOf((pageCursor) => fetchPage(roomId, pageCursor))) {
		const stories = (page.data ?? []).filter((story) => typeof story?.storyId === 'string' && !Number.isNaN(timeOf(story.createdAt)));
		let reachedTaken = false;
		for (const story of stories) {
			ids.add(story.storyId);
			newest = higherMark(newest, { at: story.createdAt, uids: [story.storyId] });
			if (after === null || isAfter(after, story.storyId, story.createdAt)) newer.set(story.storyId, story);
			else reachedTaken = true;
		}
		if (reachedTaken && isNewestFirst(stories)) break;
	}
	const messages = [...newer.values()].sort((a, b) => timeOf(a.createdAt) - timeOf(b.createdAt));
	return { messages, newest, ids };
}
