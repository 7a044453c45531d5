import type { ILoadOptionsFunctions, INodeListSearchItems, INodeListSearchResult } from 'n8n-workflow';

import { pagesOf } from '../../shared/pagination';
import type { RoomPeople } from '../../shared/roomPeople';
import { agencyMembersIn } from '../../shared/roomPeople';
import { agencyInboxApiPaginate, agencyInboxApiRequest } from '../../shared/serviceClient';
import { listLabel } from './labels';
import { matchesFilter } from './matchesFilter';
import type { RoomSummary } from './searchRooms';

interface MemberSummary {
	uid: string;
	name?: string;
	ciphertext?: string;
	role?: string;
}

function memberListItem(member: MemberSummary): INodeListSearchItems {
	return { name: listLabel([member.name, member.role], member.uid), value: member.uid };
}

/** The room chosen in the Room parameter, when it is a fixed ID (not empty, not an expression). */
function chosenRoomId(context: ILoadOptionsFunctions): string | undefined {
	let value: unknown;
	try {
		value = context.getCurrentNodeParameter('roomId', { extractValue: true });
	} catch {
		return undefined;
	}
	if (typeof value !== 'string') return undefined;
	const roomId = value.trim();
	return roomId === '' || roomId.startsWith('=') ? undefined : roomId;
}

/** The service has no read of one room: pages through the rooms until it meets this one. */
async function findRoom(context: ILoadOptionsFunctions, roomId: string): Promise<RoomSummary | undefined> {
	const pages = pagesOf(async (pageCursor) =>
		await agencyInboxApiRequest.call(context, 'GET', '/v1/master-inbox/rooms', { qs: { pageSize: '100', ...(pageCursor ? { pageCursor } : {}) } }),
	);
	for await (const { page } of pages) {
		const rooms = (Array.isArray(page.data) ? page.data : []) as unknown as RoomSummary[];
		const room = rooms.find((candidate) => candidate.roomId === roomId);
		if (room) return room;
	}
	return undefined;
}

/**
 * Freelancers for the Freelancer locator: with a room chosen, the agency members taking part in it
 * (only they can send there; who is who: nodes/shared/roomPeople.ts); otherwise, when the room is not
 * found, or when none of its participants can be told for a member, every agency member, one page per
 * call. The filter applies to names, roles and IDs.
 */
export async function searchFreelancers(
	this: ILoadOptionsFunctions,
	filter?: string,
	paginationToken?: string,
): Promise<INodeListSearchResult> {
	const roomId = paginationToken ? undefined : chosenRoomId(this);
	const room = roomId ? await findRoom(this, roomId) : undefined;
	if (room) {
		const members = (await agencyInboxApiPaginate.call(this, '/v1/agency/members')) as unknown as MemberSummary[];
		const takingPart = agencyMembersIn(room as RoomPeople, members) as MemberSummary[];
		return { results: (takingPart.length > 0 ? takingPart : members).map(memberListItem).filter((item) => matchesFilter(filter, item.name)) };
	}
	const page = await agencyInboxApiRequest.call(this, 'GET', '/v1/agency/members', {
		qs: paginationToken ? { pageCursor: paginationToken } : {},
	});
	const members = (Array.isArray(page.data) ? page.data : []) as unknown as MemberSummary[];
	return {
		results: members.map(memberListItem).filter((item) => matchesFilter(filter, item.name)),
		paginationToken: page.meta?.nextCursor || undefined,
	};
}
