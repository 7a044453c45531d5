import type { IDataObject, INodeExecutionData, INodeType, INodeTypeDescription, IPollFunctions } from 'n8n-workflow';

import { pagingDeadline, runGuardedPoll } from '../shared/guardedPoll';
import { MAIN_CONNECTION } from '../shared/n8nVersions';
import { agencyInboxApiPaginate, agencyInboxApiRequest } from '../shared/transport';
import { clientMessageItem } from './clientMessageItem';
import { messageTriggerProperties } from './description';
import type { ClientMessage } from './pollMessages';
import { bootstrapMessages, pollMessages } from './pollMessages';
import type { MessageTriggerState } from './state';
import { isOlderMessageState, loadMessageState, saveMessageState } from './state';
import type { FetchRoomsPage, FetchStoriesPage, ListPage, LoadMemberIds, RoomRow, StoryRow } from './types';

/** Rooms per page: an idle poll reads one page, and a burst across up to this many rooms costs no second one. */
const ROOMS_PAGE_SIZE = '25';
const MESSAGES_PAGE_SIZE = '50';

function roomsFetcher(context: IPollFunctions): FetchRoomsPage {
	return async (pageCursor) =>
		(await agencyInboxApiRequest.call(context, 'GET', '/v1/master-inbox/rooms', {
			qs: { sort: 'date-desc', pageSize: ROOMS_PAGE_SIZE, ...(pageCursor ? { pageCursor } : {}) },
		})) as unknown as ListPage<RoomRow>;
}

function storiesFetcher(context: IPollFunctions): FetchStoriesPage {
	return async (roomId, pageCursor) =>
		(await agencyInboxApiRequest.call(context, 'GET', `/v1/master-inbox/rooms/${encodeURIComponent(roomId)}/stories`, {
			qs: { pageSize: MESSAGES_PAGE_SIZE, ...(pageCursor ? { pageCursor } : {}) },
		})) as unknown as ListPage<StoryRow>;
}

function memberIdsLoader(context: IPollFunctions): LoadMemberIds {
	return async () => {
		const members = await agencyInboxApiPaginate.call(context, '/v1/agency/members', { pageSize: '100' });
		return new Set(members.map((member) => String(member.uid)));
	};
}

/** Fetch Test Event: the newest room whose last message is a client's, as that message. */
async function sampleMessage(context: IPollFunctions): Promise<ClientMessage | undefined> {
	const page = await roomsFetcher(context)(undefined);
	const memberIds = await memberIdsLoader(context)();
	for (const room of page.data ?? []) {
		const last = room.lastStory as (RoomRow['lastStory'] & { message?: string; user?: { id?: string; name?: string | null; photoUrl?: string | null } | null }) | null | undefined;
		const authorId = last?.user?.id;
		if (!last?.storyId || !authorId || memberIds.has(authorId)) continue;
		const story: StoryRow = {
			storyId: last.storyId,
			userId: authorId,
			userName: last.user?.name ?? undefined,
			userPhotoUrl: last.user?.photoUrl ?? undefined,
			message: last.message ?? '',
			createdAt: last.createdDateTime ?? room.lastStoryAt ?? '',
		};
		return { room, story };
	}
	return undefined;
}

export class AgencyInboxMessageTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Agency Inbox Message Trigger',
		name: 'agencyInboxMessageTrigger',
		icon: { light: 'file:../../icons/agencyInbox.svg', dark: 'file:../../icons/agencyInbox.dark.svg' },
		group: ['trigger'],
		version: 1,
		subtitle: 'New client messages (polling)',
		description: 'Starts the workflow when a client writes in a Master Inbox chat room (polling, no public URL needed)',
		defaults: { name: 'Agency Inbox Message Trigger' },
		polling: true,
		inputs: [],
		outputs: [MAIN_CONNECTION],
		credentials: [{ name: 'agencyInboxApi', required: true }],
		properties: messageTriggerProperties,
	};

	async poll(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
		if (this.getMode() === 'manual') {
			const sample = await sampleMessage(this);
			return sample ? [[{ json: clientMessageItem(sample) }]] : null;
		}
		const fetchRooms = roomsFetcher(this);
		const messages = await runGuardedPoll<MessageTriggerState, ClientMessage>(
			this,
			{
				load: loadMessageState,
				save: saveMessageState,
				isOlder: isOlderMessageState,
				bootstrap: async () => await bootstrapMessages(fetchRooms),
				poll: async (state) => {
					const outcome = await pollMessages(state, {
						fetchRooms,
						fetchStories: storiesFetcher(this),
						loadMemberIds: memberIdsLoader(this),
						canContinue: pagingDeadline(this),
					});
					return { state: outcome.state, changes: outcome.messages };
				},
			},
			'Agency Inbox Message Trigger',
		);
		if (messages.length === 0) return null;
		return [messages.map((message) => ({ json: clientMessageItem(message) as IDataObject }))];
	}
}
