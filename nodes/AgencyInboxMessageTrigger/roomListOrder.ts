/**
 * What the rows a poll read show about the order of the room list. The spec sorts rooms by an unnamed
 * "date" (`sort=date-desc`), and a room carries several dates; a poll may leave the pages below the
 * rows it read unread only where those rows themselves show that every room with an unread message is
 * listed above them, whichever of the rows' dates the list is sorted by.
 */
import type { Mark } from '../shared/marks';
import { higherMark, isAtOrBelow, isWholeSecond, timeOf } from '../shared/marks';
import type { Page, RoomRow } from './types';

/** The latest time the row shows for the room's messages; null when it shows none. */
export function lastActivityOf(room: RoomRow): string | null {
	const times = [room.lastStoryAt, room.lastStory?.createdDateTime].filter((time): time is string => typeof time === 'string' && !Number.isNaN(timeOf(time)));
	if (times.length === 0) return null;
	return times.reduce((latest, time) => (timeOf(time) > timeOf(latest) ? time : latest));
}

/** The rows of a page of rooms that name a room. */
export const rowsOf = (page: Page<RoomRow>) => (page.data ?? []).filter((room) => typeof room?.roomId === 'string');

export const lastStoryIdOf = (room: RoomRow) => room.lastStoryId ?? room.lastStory?.storyId ?? null;

/** The highest activity of rows of rooms, with the last message ids at that time. */
export function topOf(rooms: RoomRow[]): Mark | undefined {
	let top: Mark | undefined;
	for (const room of rooms) {
		const at = lastActivityOf(room);
		const id = lastStoryIdOf(room);
		if (at !== null) top = higherMark(top, { at, uids: id === null ? [] : [id] });
	}
	return top;
}

/**
 * Whether a line has taken a row's last message (its time and id): as `isAtOrBelow`, but a row time
 * with whole seconds may stand for any moment of its second, so where the line lies in that second
 * only the id tells.
 */
export function rowIsAtOrBelow(line: Mark, lastId: string, rowTime: string): boolean {
	if (!isWholeSecond(rowTime)) return isAtOrBelow(line, lastId, rowTime);
	const start = timeOf(rowTime);
	const lineAt = timeOf(line.at);
	return start + 1000 <= lineAt || (start <= lineAt && line.uids.includes(lastId));
}

/** A field of the row, or a field of an object the row holds: ['lastSyncedAt'], ['contract', 'createdDateTime']. */
export type DatePath = [string] | [string, string];

/** The fields `lastActivityOf` reads: the order the stop relies on, not another one. */
const LAST_MESSAGE_FIELDS = ['lastStoryAt', 'lastStory.createdDateTime'];

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?$/i;

const isDateTime = (value: unknown): value is string => typeof value === 'string' && ISO_DATE_TIME.test(value) && !Number.isNaN(timeOf(value));

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function valueAt(row: RoomRow, path: DatePath): unknown {
	const outer = (row as unknown as Record<string, unknown>)[path[0]];
	if (path.length === 1) return outer;
	return isPlainObject(outer) ? outer[path[1]] : undefined;
}

const timeAt = (row: RoomRow, path: DatePath) => timeOf(valueAt(row, path) as string);

/**
 * Every date the rows carry besides the last message's time, found by shape, not by name: each field
 * of the row, and of the objects it holds one level down, whose value is an ISO-8601 date-time on
 * every row (`lastSyncedAt`, `createdAtDateTime`, and whatever else a service adds).
 */
export function otherDatesOf(rows: RoomRow[]): DatePath[] {
	if (rows.length === 0) return [];
	const candidates: DatePath[] = [];
	for (const [field, value] of Object.entries(rows[0] as unknown as Record<string, unknown>)) {
		if (isDateTime(value)) candidates.push([field]);
		else if (isPlainObject(value)) for (const [inner, innerValue] of Object.entries(value)) if (isDateTime(innerValue)) candidates.push([field, inner]);
	}
	return candidates.filter((path) => !LAST_MESSAGE_FIELDS.includes(path.join('.')) && rows.every((row) => isDateTime(valueAt(row, path))));
}

/**
 * Whether a room's row shows the same times as an earlier row of it: its last message and every other
 * date both carry. A room whose row changed since (a new message, a re-sync) may have moved in the list.
 */
export function showsSameTimes(row: RoomRow, earlier: RoomRow): boolean {
	const last = lastActivityOf(row);
	const lastBefore = lastActivityOf(earlier);
	if ((last === null) !== (lastBefore === null) || (last !== null && timeOf(last) !== timeOf(lastBefore!))) return false;
	return otherDatesOf([row, earlier]).every((path) => timeAt(row, path) === timeAt(earlier, path));
}

const isNonIncreasing = (times: number[]) => times.every((time, index) => index === 0 || times[index - 1] >= time);

/**
 * Whether each read of the list (the pages of one sweep in turn, or the first page read again) lists
 * its rooms newest last message first. Rows without a message time are left out.
 */
export function inLastMessageOrder(reads: RoomRow[][]): boolean {
	return reads.every((rows) =>
		isNonIncreasing(
			rows
				.map(lastActivityOf)
				.filter((time): time is string => time !== null)
				.map(timeOf),
		),
	);
}

const isNonDecreasing = (ids: string[]) => ids.every((id, index) => index === 0 || ids[index - 1] <= id);

/** Whether each read lists its rooms in the order of their ids, one way or the other: the usual tie-break of a sort. */
const inRoomIdOrder = (reads: RoomRow[][]) =>
	reads.every((rows) => {
		const ids = rows.map((row) => row.roomId);
		return isNonDecreasing(ids) || isNonDecreasing([...ids].reverse());
	});

/**
 * Whether a stop is safe should the list be sorted by the date at `path`. A date the rows read are not
 * in order of cannot be the list's order. One they are: rooms below the stop row have it no later
 * than the stop row, so the stop is safe if a new message moves it up (on every row read it is at or
 * after the last message) and the stop row's is below the floor. A date that is the same on every row
 * read and that a message does not move (rooms created at one moment) orders the list, if it does,
 * only by its tie-break: rows in the order of their room ids may be in that order and in the last
 * message's only by chance, so they show nothing; rows in another order show it is not the room id.
 * The same date on every row that is after every message (a page of rooms re-synced at one moment) is
 * checked like any other.
 */
function stopIsSafeIfSortedBy(path: DatePath, reads: RoomRow[][], stopRow: RoomRow, floor: Mark): boolean {
	if (!reads.every((rows) => isNonIncreasing(rows.map((row) => timeAt(row, path))))) return true;
	const rows = reads.flat();
	const movesWithMessages = rows.every((row) => {
		const last = lastActivityOf(row);
		return last === null || timeAt(row, path) >= timeOf(last);
	});
	const sameOnEveryRow = new Set(rows.map((row) => timeAt(row, path))).size === 1;
	if (!movesWithMessages) return sameOnEveryRow && !inRoomIdOrder(reads);
	return timeAt(stopRow, path) < timeOf(floor.at);
}

/**
 * Whether a poll may leave the pages below the rows it has read unread. All of it must hold:
 * the last row read with a message time (the stop row) is below the floor; the rows read are in
 * order of the last message; and for every other date the rows carry, the stop is safe should the
 * list be sorted by that date. What earlier polls saw is the caller's part: a contradiction seen once
 * rules stops out for the activation.
 */
export function mayStopBelow(reads: RoomRow[][], floor: Mark): boolean {
	const stopRow = [...(reads.at(-1) ?? [])].reverse().find((row) => lastActivityOf(row) !== null);
	if (!stopRow || timeOf(lastActivityOf(stopRow)!) >= timeOf(floor.at)) return false;
	if (!inLastMessageOrder(reads)) return false;
	return otherDatesOf(reads.flat()).every((path) => stopIsSafeIfSortedBy(path, reads, stopRow, floor));
}
