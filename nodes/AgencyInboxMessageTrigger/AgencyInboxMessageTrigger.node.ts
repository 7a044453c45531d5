import type { IDataObject, INodeExecutionData, INodeType, INodeTypeDescription, IPollFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { httpStatusOf } from '../shared/errors';
import type { CanContinue } from '../shared/guardedPoll';
import { pagingDeadline, runGuardedPoll } from '../shared/guardedPoll';
import { checkDateOfNewPass, readStartDate, refuseBeyondLimit } from '../shared/startFrom';
import { triggerDescription } from '../shared/triggerDescription';
import type { AgencyMember } from '../shared/roomPeople';
import { isAgencyAuthor } from '../shared/roomPeople';
import { agencyInboxApiPaginate, agencyInboxApiRequest } from '../shared/serviceClient';
import { proposalPageFetcher } from '../shared/proposalSweep';
import { clientMessageItem } from './clientMessageItem';
import { longFailureOf } from './failingRooms';
import { messageTriggerProperties } from './description';
import type { ClientMessage } from './pollMessages';
import { ACTIVATION_PAGING_MS, bootstrapMessages } from './activation';
import { sampleBackfilledMessage, stepMessageBackfill } from './backfill';
import { pollMessages } from './pollMessages';
import { PROPOSALS_NOT_READ } from './roomProposal';
import type { MessageTriggerState } from './state';
import { isOlderMessageState, loadMessageState, saveMessageState } from './state';
import type { FetchProposal, FetchRoomsPage, FetchStoriesPage, LoadMembers, Page, ProposalRow, RoomRow, StoryRow } from './types';

/** Rooms per page: an idle poll reads one page, and a burst across up to this many rooms costs no second one. */
const ROOMS_PAGE_SIZE = '25';
/** Page sizes the spec does not name a parameter for: sent for economy, dropped if the service refuses them. */
const MESSAGES_PAGE_SIZE = '50';
const MEMBERS_PAGE_SIZE = '100';
const PROPOSALS_PAGE_SIZE = '100';
/** The backfill reads every page of the list: larger pages where the service takes them. */
const BACKFILL_ROOMS_PAGE_SIZE = '100';

function roomsFetcher(context: IPollFunctions): FetchRoomsPage {
	return async (pageCursor) =>
		(await agencyInboxApiRequest.call(context, 'GET', '/v1/master-inbox/rooms', {
			qs: { sort: 'date-desc', pageSize: ROOMS_PAGE_SIZE, ...(pageCursor ? { pageCursor } : {}) },
		})) as unknown as Page<RoomRow>;
}

/** The backfill's sweep: oldest first, so a room that gets a message moves ahead of the sweep, not behind it. */
function roomsAscendingFetcher(context: IPollFunctions): FetchRoomsPage {
	return async (pageCursor) =>
		(await agencyInboxApiRequest.call(context, 'GET', '/v1/master-inbox/rooms', {
			qs: { sort: 'date-asc', ...(pageCursor ? { pageCursor } : {}) },
			optionalQs: { pageSize: BACKFILL_ROOMS_PAGE_SIZE },
		})) as unknown as Page<RoomRow>;
}

function storiesFetcher(context: IPollFunctions): FetchStoriesPage {
	return async (roomId, pageCursor) =>
		(await agencyInboxApiRequest.call(context, 'GET', `/v1/master-inbox/rooms/${encodeURIComponent(roomId)}/stories`, {
			qs: pageCursor ? { pageCursor } : {},
			optionalQs: { pageSize: MESSAGES_PAGE_SIZE },
		})) as unknown as Page<StoryRow>;
}

/** The agency's members, read at most once per loader: one per poll, shared by the live part and the backfill. */
function membersLoader(context: IPollFunctions): LoadMembers {
	let members: Promise<AgencyMember[]> | undefined;
	return async () =>
		await (members ??= agencyInboxApiPaginate.call(context, '/v1/agency/members', { optionalQs: { pageSize: MEMBERS_PAGE_SIZE } }) as unknown as Promise<AgencyMember[]>);
}

/**
 * The spec defines no error for an id that is not a proposal's uid: a 404, but also a 400 (an id of
 * another form) or 422 says the service has no such proposal. Other failures (401, 403, 429 after the
 * pipeline's wait, 5xx after its retries) say nothing about the id: they fail the poll, which the next
 * poll repeats from the same state.
 */
const meansNoSuchProposal = (error: unknown) => [400, 404, 410, 422].includes(httpStatusOf(error) ?? 0);

function proposalFetcher(context: IPollFunctions): FetchProposal {
	return async (id) => {
		const answer = await agencyInboxApiRequest.call(context, 'GET', `/v1/agency/proposals/${encodeURIComponent(id)}`).then(
			(envelope) => ({ record: envelope.data as unknown as ProposalRow | undefined }),
			(failure: unknown) => ({ failure }),
		);
		if ('record' in answer) return answer.record;
		if (meansNoSuchProposal(answer.failure)) return undefined;
		throw answer.failure;
	};
}

/** The activation's paging stops at the poll's deadline or ACTIVATION_PAGING_MS from now, whichever comes first. */
function activationDeadline(context: IPollFunctions): CanContinue {
	const pollDeadline = pagingDeadline(context);
	const endsAt = Date.now() + ACTIVATION_PAGING_MS;
	return () => pollDeadline() && Date.now() < endsAt;
}

/** Fetch Test Event: the newest room whose last message is a client's, as that message (no proposal lookup). */
async function sampleMessage(context: IPollFunctions): Promise<ClientMessage | undefined> {
	const page = await roomsFetcher(context)(undefined);
	const members = await membersLoader(context)();
	for (const room of page.data ?? []) {
		const last = room.lastStory;
		const authorId = last?.user?.id;
		if (!last?.storyId || !authorId) continue;
		const story: StoryRow = {
			storyId: last.storyId,
			userId: authorId,
			userName: last.user?.name ?? undefined,
			userPhotoUrl: last.user?.photoUrl ?? undefined,
			message: last.message ?? '',
			createdAt: last.createdDateTime ?? room.lastStoryAt ?? '',
		};
		if (!isAgencyAuthor(story, room, members)) return { room, story, proposal: PROPOSALS_NOT_READ, agencyMembers: [] };
	}
	return undefined;
}

export class AgencyInboxMessageTrigger implements INodeType {
	description: INodeTypeDescription = {
		...triggerDescription({ polling: true }),
		displayName: 'Agency Inbox Message Trigger',
		name: 'agencyInboxMessageTrigger',
		icon: { light: 'file:../../icons/agencyInbox.svg', dark: 'file:../../icons/agencyInbox.dark.svg' },
		subtitle: 'New client messages (polling)',
		description: 'Starts the workflow when a client writes in a Master Inbox chat room (polling, no public URL needed)',
		defaults: { name: 'Agency Inbox Message Trigger' },
		properties: messageTriggerProperties,
	};

	async poll(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
		const nowMs = Date.now();
		const startDate = readStartDate(this, nowMs);
		const backfillSources = { fetchRoomsAscending: roomsAscendingFetcher(this), fetchStories: storiesFetcher(this), loadMembers: membersLoader(this) };
		if (this.getMode() === 'manual') {
			if (startDate) refuseBeyondLimit(this, startDate, nowMs);
			const sample = startDate ? await sampleBackfilledMessage(startDate, nowMs, backfillSources, PROPOSALS_NOT_READ) : await sampleMessage(this);
			return sample ? [[{ json: clientMessageItem(sample) }]] : null;
		}
		const stored = loadMessageState(this.getWorkflowStaticData('node'));
		checkDateOfNewPass(this, startDate, stored, stored?.historyFromFloor !== true, nowMs);
		const fetchRooms = roomsFetcher(this);
		const messages = await runGuardedPoll<MessageTriggerState, ClientMessage>(
			this,
			{
				load: loadMessageState,
				save: saveMessageState,
				isOlder: isOlderMessageState,
				bootstrap: async () => await bootstrapMessages(fetchRooms, Date.now, activationDeadline(this)),
				failureToShow: (state, lastShownAtMs, nowMs) => {
					const failure = longFailureOf(state.failingRooms ?? {}, nowMs, lastShownAtMs);
					return failure && new NodeOperationError(this.getNode(), failure.message, { description: failure.description });
				},
				poll: async (state) => {
					const canContinue = pagingDeadline(this);
					const outcome = await pollMessages(state, {
						fetchRooms,
						...backfillSources,
						fetchProposal: proposalFetcher(this),
						fetchProposalsPage: proposalPageFetcher(this, PROPOSALS_PAGE_SIZE),
						canContinue,
						now: Date.now,
						backfill: async (polled, proposals) => await stepMessageBackfill(polled, startDate, { ...backfillSources, canContinue }, proposals),
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
