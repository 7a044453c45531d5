/** The parts of the service's records this trigger reads (spec: Chat room, Story, Agency member). */

export interface RoomRow {
	roomId: string;
	roomName?: string | null;
	topic?: string | null;
	lastStoryId?: string | null;
	lastStoryAt?: string | null;
	lastStory?: { storyId?: string; createdDateTime?: string | null } | null;
	vendorProposal?: { id?: string } | null;
	organization?: { id?: string | null; name?: string | null } | null;
}

export interface StoryRow {
	storyId: string;
	userId: string;
	userName?: string;
	userPhotoUrl?: string;
	message: string;
	createdAt: string;
	attachments?: unknown[];
}

export interface ListPage<T> {
	data: T[];
	meta?: { nextCursor?: string | null };
}

export type FetchRoomsPage = (pageCursor: string | undefined) => Promise<ListPage<RoomRow>>;
export type FetchStoriesPage = (roomId: string, pageCursor: string | undefined) => Promise<ListPage<StoryRow>>;
/** The ids of the agency's members; loaded at most once per poll, and only by a poll that reads messages. */
export type LoadMemberIds = () => Promise<ReadonlySet<string>>;
