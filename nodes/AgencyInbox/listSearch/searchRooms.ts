import type { ILoadOptionsFunctions, INodeListSearchItems, INodeListSearchResult } from 'n8n-workflow';

import { agencyInboxApiRequest } from '../../shared/serviceClient';
import { listLabel, shortTime } from './labels';

export interface RoomSummary {
	roomId: string;
	roomName?: string | null;
	topic?: string | null;
	organization?: { name?: string | null } | null;
	lastStoryAt?: string | null;
	createdAtDateTime?: string | null;
	roomUsers?: Array<{ user?: { id?: string; name?: string | null } | null; role?: string | null }> | null;
}

/** "Client · topic · last message <time> (room-id)": one client often has several rooms, one per job. */
export function roomListItem(room: RoomSummary): INodeListSearchItems {
	const time = shortTime(room.lastStoryAt);
	const name = room.roomName || room.organization?.name;
	const topic = room.topic && room.topic !== name ? room.topic : undefined;
	return {
		name: listLabel([name, topic, time ? `last message ${time}` : `created ${shortTime(room.createdAtDateTime) ?? '?'}`], room.roomId),
		value: room.roomId,
	};
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
		results: rooms.map(roomListItem),
		paginationToken: page.meta?.nextCursor || undefined,
	};
}
