/**
 * Messages the service syncs late: a story whose `createdAt` is below the room's mark (the newest
 * message the trigger read there), written before a reply the trigger already read. The row's times
 * and last message do not move for it; what moves is `storiesCount` ("total messages synced") and
 * `lastSyncedAt` ("time of last synchronisation"). Such a row is read again, and the room's list is
 * read back below the mark to the look-back floor: every message there whose id the trigger has not
 * read is new. The ids read above the floor are kept per room (the window), and the floor rises past
 * the oldest ones dropped; it never lies below the line the room was first read after (the history
 * line at the latest), so nothing written before the activation is emitted.
 *
 * The window: every room keeps its newest MIN_IDS_PER_ROOM ids; beyond those, a busy room keeps up to
 * MAX_IDS_PER_ROOM while the whole inbox keeps at most MAX_IDS_KEPT (the oldest beyond each room's
 * minimum go first), so a message synced behind hundreds of messages of its room is still told apart.
 * A look-back stops as soon as it has found as many messages as the count moved by; where the row
 * shows no count it reads back over the newest MIN_IDS_PER_ROOM only (a background re-sync moves
 * `lastSyncedAt` without a late message: that read usually finds nothing).
 *
 * Cost, per room whose row shows a late sync: its pages until the count's messages are found (one page
 * at the default page size of 50 where they are among the newest 50), at most
 * ceil((MAX_IDS_PER_ROOM + messages synced since its last read) / page size) + 1, and none where
 * `storiesCount` shows every message synced is above the mark. State: about 40 bytes an id with ids
 * of 24 characters: under 1 KB for a room at its minimum, under 1.6 MB for the inbox.
 */
import type { Mark } from '../shared/marks';
import { higherMark, isAfter, isAtOrBelow, isMark, timeOf } from '../shared/marks';
import type { RoomRow } from './types';

/** The newest messages read in a room whose ids are always kept, and all a look-back reads over where the row shows no count. */
export const MIN_IDS_PER_ROOM = 20;
/** Most ids kept for one room: a message synced behind up to this many messages read in its room is recognised as new. */
export const MAX_IDS_PER_ROOM = 500;
/** Most ids kept over all rooms (MAX_ROOMS_KEPT rooms at their minimum): past it the oldest beyond each room's minimum are dropped. */
export const MAX_IDS_KEPT = 40_000;

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
 * kept; where the row shows no count, over the newest MIN_IDS_PER_ROOM only. A room read for the
 * first time (no mark) has no look-back: it is read after `line` anyway.
 */
export function lookBackOf(room: RoomRow, mark: (Mark & LateSyncMark) | undefined, line: Mark | null): LookBack | undefined {
	if (!mark) return undefined;
	const count = countOf(room);
	const expected = count !== undefined && mark.count !== undefined ? Math.max(0, count - mark.count) : undefined;
	const kept = { seen: mark.seen ?? {}, seenFrom: mark.seenFrom ?? { at: mark.at, uids: mark.uids } };
	const own = expected === undefined ? windowOf(newestFirst(kept.seen), MIN_IDS_PER_ROOM, kept.seenFrom).seenFrom : kept.seenFrom;
	return { floor: line ? higherMark(own, line) : own, seen: new Set(Object.keys(kept.seen)), expected };
}

/** Whether a story below the mark is one the look-back emits: above its floor, and not read before. */
export const isLateNew = (lookBack: LookBack, storyId: string, createdAt: string) => isAfter(lookBack.floor, storyId, createdAt) && !lookBack.seen.has(storyId);

/** Whether the look-back has reached its floor with this story. */
export const reachesFloor = (lookBack: LookBack, storyId: string, createdAt: string) => isAtOrBelow(lookBack.floor, storyId, createdAt);

type Window = Required<Pick<LateSyncMark, 'seen' | 'seenFrom'>>;

const newestFirst = (seen: Record<string, number>) => Object.entries(seen).sort(([, a], [, b]) => b - a);

/** The newest `keep` of `byTime` (fewer where several share the time cut), the floor raised to the newest time dropped with the ids dropped at it. */
function windowOf(byTime: Array<[string, number]>, keep: number, floor: Mark): Window {
	if (byTime.length <= keep) return { seen: Object.fromEntries(byTime), seenFrom: floor };
	const cutMs = byTime[keep][1];
	const kept = byTime.filter(([, ms]) => ms > cutMs);
	const droppedAtCut = byTime.filter(([, ms]) => ms === cutMs).map(([id]) => id);
	return { seen: Object.fromEntries(kept), seenFrom: { at: new Date(cutMs).toISOString(), uids: droppedAtCut } };
}

/**
 * The ids to keep after a read: the earlier ones and every message read above the floor (`floor`:
 * the previous one, or the line a first read was made after), the newest MAX_IDS_PER_ROOM of them.
 */
export function nextWindow(mark: LateSyncMark | undefined, floor: Mark, read: ReadonlyMap<string, number>): Window {
	const all = new Map(Object.entries(mark?.seen ?? {}));
	for (const [id, ms] of read) if (isAfter(floor, id, new Date(ms).toISOString())) all.set(id, ms);
	return windowOf([...all].sort(([, a], [, b]) => b - a), MAX_IDS_PER_ROOM, floor);
}

/**
 * The rooms' windows within MAX_IDS_KEPT over all rooms: each room keeps its newest MIN_IDS_PER_ROOM;
 * past the total, the oldest ids beyond those are dropped, whichever room they are in.
 */
export function windowsWithinTotal<R extends LateSyncMark>(rooms: Record<string, R>): Record<string, R> {
	const sizes = Object.entries(rooms).map(([roomId, room]) => ({ roomId, room, size: Object.keys(room.seen ?? {}).length }));
	if (sizes.reduce((total, { size }) => total + size, 0) <= MAX_IDS_KEPT) return rooms;
	const atMinimum = sizes.reduce((total, { size }) => total + Math.min(size, MIN_IDS_PER_ROOM), 0);
	const busy = sizes.filter(({ size }) => size > MIN_IDS_PER_ROOM).map((window) => ({ ...window, byTime: newestFirst(window.room.seen ?? {}) }));
	const beyondMinimum = busy.flatMap(({ byTime }) => byTime.slice(MIN_IDS_PER_ROOM).map(([, ms]) => ms)).sort((a, b) => b - a);
	const cutMs = beyondMinimum[Math.max(0, MAX_IDS_KEPT - atMinimum)];
	const trimmed = { ...rooms };
	for (const { roomId, room, byTime } of busy) {
		const keep = MIN_IDS_PER_ROOM + byTime.slice(MIN_IDS_PER_ROOM).filter(([, ms]) => ms > cutMs).length;
		if (keep < byTime.length && room.seenFrom) trimmed[roomId] = { ...room, ...windowOf(byTime, keep, room.seenFrom) };
	}
	return trimmed;
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
