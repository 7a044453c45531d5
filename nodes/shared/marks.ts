/**
 * A position in a time ordering: a time plus the records already taken exactly at that time (the
 * service's times have millisecond precision, so several records may share one). Only the ids AT the
 * mark are kept, so a mark stays as small as the number of records sharing one timestamp.
 */
export interface Mark {
	at: string;
	uids: string[];
}

export function timeOf(iso: string): number {
	return Date.parse(iso);
}

/**
 * Whether a time names no moment below the second (no digits there, or zeros): a service storing whole
 * seconds shows its times so, and such a time may stand for any moment of that second.
 */
export const isWholeSecond = (iso: string): boolean => timeOf(iso) % 1000 === 0;

function compareToMark(mark: Mark, updatedAt: string): number {
	return Math.sign(timeOf(updatedAt) - timeOf(mark.at));
}

/** By time only: negative when a is earlier than b, 0 at the same time (whatever the uids). */
export function compareMarks(a: Mark, b: Mark): number {
	return -compareToMark(a, b.at);
}

/** Taken by the mark: earlier than it, or at it and already listed. */
export function isAtOrBelow(mark: Mark, uid: string, updatedAt: string): boolean {
	const order = compareToMark(mark, updatedAt);
	return order < 0 || (order === 0 && mark.uids.includes(uid));
}

/** Later than the mark, or at it and already listed. */
export function isAtOrAbove(mark: Mark, uid: string, updatedAt: string): boolean {
	const order = compareToMark(mark, updatedAt);
	return order > 0 || (order === 0 && mark.uids.includes(uid));
}

/** Strictly after what the mark has taken: later than it, or at it and not listed. */
export function isAfter(mark: Mark, uid: string, time: string): boolean {
	return !isAtOrBelow(mark, uid, time);
}

function mergeAtSameTime(mark: Mark, uids: string[]): Mark {
	return { at: mark.at, uids: [...new Set([...mark.uids, ...uids])] };
}

/** The later of two marks; at the same time, the union of their uids. */
export function higherMark(a: Mark | undefined, b: Mark): Mark {
	if (!a) return b;
	const order = compareToMark(a, b.at);
	if (order === 0) return mergeAtSameTime(a, b.uids);
	return order > 0 ? b : a;
}

/** The earlier of two marks; at the same time, the union of their uids. */
export function lowerMark(a: Mark | undefined, b: Mark): Mark {
	if (!a) return b;
	const order = compareToMark(a, b.at);
	if (order === 0) return mergeAtSameTime(a, b.uids);
	return order < 0 ? b : a;
}

export function isMark(value: unknown): value is Mark {
	const mark = value as Mark | undefined;
	return (
		typeof mark?.at === 'string' &&
		!Number.isNaN(timeOf(mark.at)) &&
		Array.isArray(mark.uids) &&
		mark.uids.every((uid) => typeof uid === 'string')
	);
}

