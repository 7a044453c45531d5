/** The parts of the service's records this trigger reads (spec: Chat room, Story, Agency member, Proposal record). */
import type { ListPage } from '../shared/pagination';
import type { AgencyMember, RoomPeople, UserIds } from '../shared/roomPeople';

export interface RoomRow extends RoomPeople {
	roomId: string;
	roomName?: string | null;
	topic?: string | null;
	lastStoryId?: string | null;
	lastStoryAt?: string | null;
	lastStory?: { storyId?: string; message?: string; user?: UserIds & { photoUrl?: string | null }; createdDateTime?: string | null } | null;
	vendorProposal?: { id?: string } | null;
	createdAtDateTime?: string | null;
	/** "Total messages synced" and "time of last synchronisation": what shows a message synced behind the last one (lateSync.ts). */
	storiesCount?: number | null;
	lastSyncedAt?: string | null;
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

export interface ProposalRow {
	proposal?: { uid?: string; status?: string; updatedAt?: string | null; chatRoomId?: string | null };
	freelancer?: { uid?: string; name?: string } | null;
}

export interface Page<T> extends ListPage {
	data: T[];
}

export type FetchRoomsPage = (pageCursor: string | undefined) => Promise<Page<RoomRow>>;
export type FetchStoriesPage = (roomId: string, pageCursor: string | undefined) => Promise<Page<StoryRow>>;
/** The agency's members; loaded at most once per poll, and only by a poll that reads messages. */
export type LoadMembers = () => Promise<AgencyMember[]>;
/** One proposal by id (GET /v1/agency/proposals/{id}); undefined when the service has none under that id (404, or a 400 or 422 refusing the id). */
export type FetchProposal = (id: string) => Promise<ProposalRow | undefined>;
