import type { IDataObject } from 'n8n-workflow';

/**
 * A position in the service's `updatedAt` ordering: a time plus the proposals already taken exactly
 * at that time. `updatedSince` is inclusive, so the rows at the mark come back on the next sweep; the
 * uids tell which of them were already emitted. Only the uids AT the mark are kept, so the state stays
 * as small as the number of proposals sharing one timestamp.
 */
export interface Mark {
	at: string;
	uids: string[];
}

/** A sweep that ran out of poll time: where to resume and which part of the ordering it already took. */
export interface PendingSweep {
	cursor: string;
	/** The highest row taken so far: the next watermark once the sweep completes. */
	top?: Mark;
	/** The lowest row taken so far: everything at or above it was emitted (or is newer, for the next sweep). */
	floor?: Mark;
}

export interface TriggerState {
	/** Highest `updatedAt` received from the service (never the clock, except the bootstrap value). */
	watermark: Mark;
	pending?: PendingSweep;
}

export function timeOf(iso: string): number {
	return Date.parse(iso);
}

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

/**
 * Spec rule 5 bootstraps with the clock noted before a full pass without `updatedSince`. The full pass
 * only serves to read history, and this trigger emits nothing historic, so it would cost one request
 * per page of the agency's whole history (hundreds at 20 per minute) to produce nothing: skipped.
 * Everything that changes from now on carries an `updatedAt` at or after the noted time.
 */
export function bootstrapState(now: Date): TriggerState {
	return { watermark: { at: now.toISOString(), uids: [] } };
}

function isMark(value: unknown): value is Mark {
	const mark = value as Mark | undefined;
	return (
		typeof mark?.at === 'string' &&
		!Number.isNaN(timeOf(mark.at)) &&
		Array.isArray(mark.uids) &&
		mark.uids.every((uid) => typeof uid === 'string')
	);
}

function isPendingSweep(value: unknown): value is PendingSweep {
	const pending = value as PendingSweep | undefined;
	return (
		typeof pending?.cursor === 'string' &&
		(pending.top === undefined || isMark(pending.top)) &&
		(pending.floor === undefined || isMark(pending.floor))
	);
}

/** The state kept in the node's static data, or undefined before the first activation. */
export function loadState(staticData: IDataObject): TriggerState | undefined {
	if (!isMark(staticData.watermark)) return undefined;
	const state: TriggerState = { watermark: staticData.watermark };
	if (isPendingSweep(staticData.pending)) state.pending = staticData.pending;
	return state;
}

/**
 * What to store after a poll: its state, unless a later watermark is already stored (another poll
 * overlapped and finished first). The stored watermark never moves backwards; at the same time the
 * uids taken there are united.
 */
export function mergeWithStored(stored: TriggerState | undefined, polled: TriggerState): TriggerState {
	if (!stored) return polled;
	const order = compareMarks(stored.watermark, polled.watermark);
	if (order > 0) return stored;
	if (order < 0) return polled;
	const watermark = higherMark(stored.watermark, polled.watermark);
	return polled.pending ? { watermark, pending: polled.pending } : { watermark };
}

/** Writes the poll's state into the node's static data, never moving the stored watermark backwards. */
export function saveState(staticData: IDataObject, polled: TriggerState): void {
	const state = mergeWithStored(loadState(staticData), polled);
	staticData.watermark = state.watermark as unknown as IDataObject;
	if (state.pending) staticData.pending = state.pending as unknown as IDataObject;
	else delete staticData.pending;
}
