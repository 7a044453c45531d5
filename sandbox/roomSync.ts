/**
 * The service's synchronisation of rooms with the marketplace, as the sandbox plays it: a room's
 * `lastSyncedAt` ("time of last synchronisation") moves when the room gets a message (routes.ts,
 * appendStory) and when a background sync re-syncs it without one (here).
 */
import type { ChatRoom, SandboxState } from './types';

/** The `count` rooms synced longest ago (the room id breaks ties). */
export function stalestRooms(state: SandboxState, count: number): ChatRoom[] {
	return [...state.rooms].sort((a, b) => (a.lastSyncedAt ?? '').localeCompare(b.lastSyncedAt ?? '') || a.roomId.localeCompare(b.roomId)).slice(0, count);
}

/** A background re-sync of `rooms` at one moment: nothing new in them, their lastSyncedAt moves to `at`. */
export function resyncRooms(rooms: ChatRoom[], at: string): void {
	for (const room of rooms) room.lastSyncedAt = at;
}
