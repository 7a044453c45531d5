import type { ILoadOptionsFunctions, INodeListSearchResult } from 'n8n-workflow';

import { agencyInboxApiRequest } from '../../shared/transport';

interface RoomSummary {
	roomId: string;
	roomName?: string | null;
	topic?: string | null;
}

/** Rooms for the Room locator, searched by the service, one page per call. */
export async function searchRooms(
	this: ILoadOptionsFunctions,
	filter?: string,
	paginationToken?: string,
): Promise<INodeListSearchResult> {
	const page = await agencyInboxApiRequest.call(this, 'GET', '/v1/master-inbox/rooms', {
		qs: { ...(filter ? { search: filter } : {}), ...(paginationToken ? { pageCursor: paginationToken } : {}) },
	});
	const rooms = (Array.isArray(page.data) ? page.data : []) as unknown as RoomSummary[];
	return {
		results: rooms.map((room) => ({ name: room.roomName || room.topic || room.roomId, value: room.roomId })),
		paginationToken: page.meta?.nextCursor || undefined,
	};
}
