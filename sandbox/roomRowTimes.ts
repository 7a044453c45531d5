/**
 * The time readings of the room list (variants `roomRowTimes` and `roomCreation`), applied where a
 * room leaves the sandbox and where the list sorts: the state keeps every time to the millisecond,
 * so a reading switched at run time changes every answer at once. Stories keep their milliseconds.
 */
import { SEED_HISTORY_START_MS } from './seed';
import type { ChatRoom } from './types';
import type { SandboxVariants } from './variants';

type TimeReadings = Pick<SandboxVariants, 'roomRowTimes' | 'roomCreation'>;

/** When every room was created under `roomCreation=together`: one import, when the first seeded room was created. */
const ROOMS_IMPORTED_AT = new Date(SEED_HISTORY_START_MS).toISOString();

/** A time (the sandbox's ISO form, in UTC) as a service storing whole seconds shows it: `2026-06-01T10:15:42Z`. */
const toWholeSecond = (iso: string): string => `${iso.slice(0, 19)}Z`;

/** A row time as the service shows it under `roomRowTimes`. */
export function shownTime<T extends string | null | undefined>(time: T, readings: TimeReadings): T {
	return (typeof time === 'string' && readings.roomRowTimes === 'seconds' ? toWholeSecond(time) : time) as T;
}

/** A room's `createdAtDateTime` as the service shows it. */
export const shownCreatedAt = (room: ChatRoom, readings: TimeReadings): string => shownTime(readings.roomCreation === 'together' ? ROOMS_IMPORTED_AT : room.createdAtDateTime, readings);

/** A room's row as the service shows it under the time readings; the default readings show it as stored. */
export function roomRowTimesView(room: ChatRoom, readings: TimeReadings): ChatRoom {
	if (readings.roomRowTimes === 'milliseconds' && readings.roomCreation === 'spread') return room;
	return {
		...room,
		lastStoryAt: shownTime(room.lastStoryAt, readings),
		lastSyncedAt: shownTime(room.lastSyncedAt, readings),
		createdAtDateTime: shownCreatedAt(room, readings),
		lastStory: room.lastStory && {
			...room.lastStory,
			createdDateTime: shownTime(room.lastStory.createdDateTime, readings),
			updatedDateTime: shownTime(room.lastStory.updatedDateTime, readings),
		},
	};
}
