/**
 * Messages the service syncs late: a story whose `createdAt` is below the room's mark (the newest
 * message the trigger read there), written before a reply the trigger already read. The row's times
 * and last message do not move for it; what moves is `storiesCount` ("total messages synced") and
 * `lastSyncedAt` ("time of last synchronisation"). Such a row is read again, and the room's list is
 * read back below the mark to the look-back floor: every message there whose id the trigger has not
 * read is new. The ids read above the floor are kept per room, at most MAX_IDS_PER_ROOM (the floor
 * rises past the oldest ones dropped), and the floor never lies below the line the room was first
 * read after (the history line at the latest), so nothing written before the activation is emitted.
 *
 * Cost, per room whose row shows a late sync: its pages down to the floor, at most
 * ceil((MAX_IDS_PER_ROOM + messages synced since its last read) / page size) + 1 (one page at the
 * default page size of 50), and none where `storiesCount` shows every message synced is above the
 * mark. State: per room up to MAX_IDS_PER_ROOM ids with their times (about 40 bytes each with ids
 * of 24 characters: under 1 KB a room, under 2 MB for MAX_ROOMS_KEPT rooms), plus two fields.
 */
import type { Mark } from '../shared/marks';
import { higherMark, isAfter, isAtOrBelow, isMark, timeOf } from '../shared/marks';
import type { RoomRow } from './types';

/** The newest messages read in a room whose ids are kept: a message synced behind up to this many is recognised as new. */
export const MAX_IDS_PER_ROOM = 20;

/** What a room's mark keeps for late syncs; every field absent in a mark stored before they existed. */
export interface LateSyncMark {
	/** The row's `storiesCount` when the room was read. */
	count?: number;
	/** The row's `lastSyncedAt` when the room was read (ISO). */
	synced?: string;
	/** Ids of the messages read above `seenFrom`, with their times (ms). */
	seen?: Record<string, number>;
	/** The look-back floor: messages at or below it are not looked at again. Absent: the mark itself. */
	seenFrom?: Mark;
}

/** How a room is read back below its mark. */
export interface LookBack {
	floor: Mark;
	seen: ReadonlySet<string>;
	/** Messages synced since the last read (by `storiesCount`); undefined when the rows do not say. */
	expected: number | undefined;
}

const countOf = (room: RoomRow): number | undefined => (typeof room.storiesCount === 'number' && Number.isFinite(room.storiesCount) ? room.storiesCount : undefined);

const syncedAtOf = (room: RoomRow): string | undefined => (typeof room.lastSyncedAt === 'string' && !Number.isNaN(timeOf(room.lastSyncedAt)) ? room.lastSyncedAt : undefined);

/**
 * Whether the row shows messages synced since the room was read although its last message did not
 * change: its `storiesCount` moved; where either read lacks a count, its `lastSyncedAt` moved (a
 * background re-sync moves it too: the costlier path, a read that may find nothing).
 */
export function showsSyncSince(room: RoomRow, mark: LateSyncMark): boolean {
	const count = countOf(room);
	if (count !== undefined && mark.count !== undefined) return count !== mark.count;
	const synced = syncedAtOf(room);
	return synced !== undefined && mark.synced !== undefined && timeOf(synced) > timeOf(mark.synced);
}

const evidence = (count: number | undefined, synced: string | undefined): Pick<LateSyncMark, 'count' | 'synced'> => ({
	...(count === undefined ? {} : { count }),
	...(synced === undefined ? {} : { synced }),
});

/**
 * The evidence to keep with the mark after a read: the row's, where the read listed the row's last
 * message; else the mark's as it was (the row may count a message the room's list does not return
 * yet: the next poll looks again).
 */
export function evidenceAfterRead(room: RoomRow, mark: LateSyncMark | undefined, listedRowsLast: boolean): Pick<LateSyncMark, 'count' | 'synced'> {
	return listedRowsLast ? evidence(countOf(room), syncedAtOf(room)) : evidence(mark?.count, mark?.synced);
}

/**
 * How to read a room back: to its floor (never below `line`, the history line), skipping the ids
 * kept. A room read for the first time (no mark) has no look-back: it is read after `line` anyway.
 */
export function lookBackOf(room: RoomRow, mark: (Mark & LateSyncMark) | undefined, line: Mark | null): LookBack | undefined {
	if (!mark) return undefined;
	const own = mark.seenFrom ?? { at: mark.at, uids: mark.uids };
	const count = countOf(room);
	return {
		floor: line ? higherMark(own, line) : own,
		seen: new Set(Object.keys(mark.seen ?? {})),
		expected: count !== undefined && mark.count !== undefined ? Math.max(0, count - mark.count) : undefined,
	};
}

/** Whether a story below the mark is one the look-back emits: above its floor, and not read before. */
export const isLateNew = (lookBack: LookBack, storyId: string, createdAt: string) => isAfter(lookBack.floor, storyId, createdAt) && !lookBack.seen.has(storyId);

/** Whether the look-back has reached its floor with this story. */
export const reachesFloor = (lookBack: LookBack, storyId: string, createdAt: string) => isAtOrBelow(lookBack.floor, storyId, createdAt);

/**
 * The ids to keep after a read: the earlier ones and every message read above the floor (`floor`:
 * the previous one, or the line a first read was made after), the newest MAX_IDS_PER_ROOM of them.
 * Past that the floor rises to the newest time dropped, with the ids dropped at that time.
 */
export function nextWindow(mark: LateSyncMark | undefined, floor: Mark, read: ReadonlyMap<string, number>): Required<Pick<LateSyncMark, 'seen' | 'seenFrom'>> {
	const all = new Map(Object.entries(mark?.seen ?? {}));
	for (const [id, ms] of read) if (isAfter(floor, id, new Date(ms).toISOString())) all.set(id, ms);
	const byTime = [...all].sort(([, a], [, b]) => b - a);
	if (byTime.length <= MAX_IDS_PER_ROOM) return { seen: Object.fromEntries(byTime), seenFrom: floor };
	const cutMs = byTime[MAX_IDS_PER_ROOM][1];
	const kept = byTime.filter(([, ms]) => ms > cutMs);
	const droppedAtCut = byTime.filter(([, ms]) => ms === cutMs).map(([id]) => id);
	return { seen: Object.fromEntries(kept), seenFrom: { at: new Date(cutMs).toISOString(), uids: droppedAtCut } };
}

const isSeen = (value: unknown): value is Record<string, number> =>
	typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every((ms) => typeof ms === 'number' && Number.isFinite(ms));

/** The late-sync fields of a stored mark that check out; a state stored before them has none (its rooms are read as before until their next read). */
export function loadLateSyncMark(value: LateSyncMark): LateSyncMark {
	return {
		...(typeof value.count === 'number' && Number.isFinite(value.count) ? { count: value.count } : {}),
		...(typeof value.synced === 'string' && !Number.isNaN(timeOf(value.synced)) ? { synced: value.synced } : {}),
		...(isSeen(value.seen) && isMark(value.seenFrom) ? { seen: value.seen, seenFrom: value.seenFrom } : {}),
	};
}
