/**
 * Rooms whose messages or proposal the Message Trigger could not read. Such a room holds back no other:
 * the poll goes on with the other rooms, and the failing room is retried with a backoff, never taken
 * as read, so its messages arrive once, when it answers again.
 */
import { httpStatusOf, unansweredRequestOf } from '../shared/errors';

/** One room that failed, as the trigger's state keeps it. */
export interface FailingRoom {
	/** When its reads began to fail (ISO). */
	since: string;
	/** Failed attempts in a row. */
	attempts: number;
	/** When it is read again at the earliest (ISO). */
	retryAt: string;
	/** The last failure, short: status and the error's message. */
	failure: string;
}

/** The first retry of a failing room: a minute after its failure. */
export const FIRST_RETRY_MS = 60_000;
/** The backoff doubles up to this; then the room is retried hourly. */
export const LONGEST_RETRY_MS = 60 * 60_000;
/** Most rooms kept failing at once; one more failure fails the poll (a service failing this widely is not one room's). */
export const MAX_FAILING_ROOMS = 100;
/** A room failing this long shows as one failed execution ... */
export const SHOWN_AS_FAILED_AFTER_MS = 60 * 60_000;
/** ... and again at most this often while rooms keep failing (per n8n process). */
export const SHOWN_AS_FAILED_AT_MOST_EVERY_MS = 24 * 60 * 60_000;
const MAX_FAILURE_LENGTH = 200;
/** Rooms a notice names; it counts the rest. */
const ROOMS_NAMED = 5;

/** The wait after the n-th failure in a row: 1 minute, doubling (2, 4, ... 32 minutes), at most an hour. */
export function retryDelayMs(attempts: number): number {
	return Math.min(LONGEST_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.max(0, attempts - 1));
}

/**
 * Whether a failure of one room's reads is that room's own. The room list answered this same poll with
 * the same key, so a 403 there (access to the room lost), a 404, 400 or 5xx (after the pipeline's
 * retries), or no answer in time, says something about that room. A 401 (no key) or 429 (the rate
 * limit, after the pipeline's own waits) says nothing about one room, nor does a connection n8n could
 * not open or an error raised inside n8n: those fail the poll, which the next poll repeats.
 */
export function isRoomFailure(error: unknown): boolean {
	const status = httpStatusOf(error);
	if (status !== undefined) return status !== 401 && status !== 429;
	return unansweredRequestOf(error)?.sent === true;
}

function describe(error: unknown): string {
	const status = httpStatusOf(error) ?? unansweredRequestOf(error)?.code;
	const message = error instanceof Error ? error.message : String(error);
	return `${status === undefined ? '' : `${status} `}${message}`.slice(0, MAX_FAILURE_LENGTH);
}

const isFailingRoom = (value: unknown): value is FailingRoom => {
	const room = value as FailingRoom | undefined;
	return (
		typeof room?.since === 'string' &&
		!Number.isNaN(Date.parse(room.since)) &&
		typeof room.retryAt === 'string' &&
		!Number.isNaN(Date.parse(room.retryAt)) &&
		Number.isInteger(room.attempts) &&
		typeof room.failure === 'string'
	);
};

/** The stored failing rooms, checked; absent in a state stored before they existed. */
export function loadFailingRooms(value: unknown): Record<string, FailingRoom> {
	if (typeof value !== 'object' || value === null) return {};
	return Object.fromEntries(Object.entries(value).filter(([, room]) => isFailingRoom(room)));
}

/** The failing rooms during one poll: which to hold back, which to read, what failed, and what to tell. */
export class FailingRooms {
	private readonly rooms: Record<string, FailingRoom>;

	/** The rooms whose rows this poll read. */
	private readonly rowsRead = new Set<string>();

	/** `readsEveryPage`: the poll means to read every page of rooms (ALL_PAGES_AT_LEAST_EVERY_MS). */
	constructor(
		stored: Record<string, FailingRoom>,
		private readonly nowMs: number,
		private readonly readsEveryPage: boolean,
	) {
		this.rooms = { ...stored };
	}

	has(roomId: string): boolean {
		return Object.prototype.hasOwnProperty.call(this.rooms, roomId);
	}

	/** Notes that the poll read the room's row. */
	rowRead(roomId: string): void {
		this.rowsRead.add(roomId);
	}

	/**
	 * Whether a failing room's next try is due. One at the longest backoff is tried by every poll that
	 * reads every page too (hourly), so finding its row costs no read of its own.
	 */
	private isDue(room: FailingRoom): boolean {
		return Date.parse(room.retryAt) <= this.nowMs || (this.readsEveryPage && retryDelayMs(room.attempts) >= LONGEST_RETRY_MS);
	}

	/** A failing room whose next try is not due yet: the poll leaves it unread. */
	isHeldBack(roomId: string): boolean {
		return this.has(roomId) && !this.isDue(this.rooms[roomId]);
	}

	/**
	 * Reads one room: its result, or undefined when the read failed with the room's own failure
	 * (noted, the room held back until its next try). Any other failure fails the poll.
	 */
	async attempt<T>(roomId: string, read: () => Promise<T>): Promise<T | undefined> {
		const outcome = await read().then(
			(value) => ({ value }),
			(failure: unknown) => ({ failure }),
		);
		if ('value' in outcome) return outcome.value;
		const full = !this.has(roomId) && Object.keys(this.rooms).length >= MAX_FAILING_ROOMS;
		if (!isRoomFailure(outcome.failure) || full) throw outcome.failure;
		this.failed(roomId, describe(outcome.failure));
		return undefined;
	}

	/** The room was read: it fails no more. */
	recovered(roomId: string): void {
		delete this.rooms[roomId];
	}

	private failed(roomId: string, failure: string): void {
		const previous = this.has(roomId) ? this.rooms[roomId] : undefined;
		const attempts = (previous?.attempts ?? 0) + 1;
		const since = previous?.since ?? new Date(this.nowMs).toISOString();
		this.rooms[roomId] = { since, attempts, retryAt: new Date(this.nowMs + retryDelayMs(attempts)).toISOString(), failure };
	}

	/**
	 * Whether a room is due for its next try while its row is not among those this poll read: the
	 * poll then reads on instead of stopping early. Not for a room at the longest backoff: it is retried
	 * by the poll that reads every page (at least hourly), so a room failing for good does not make
	 * every poll read every page.
	 */
	awaitsItsRow(): boolean {
		return Object.entries(this.rooms).some(([roomId, room]) => !this.rowsRead.has(roomId) && this.isDue(room) && retryDelayMs(room.attempts) < LONGEST_RETRY_MS);
	}

	/** After a poll that read every page: a room due whose row was not listed counts as failed again. */
	notListed(): void {
		for (const [roomId, room] of Object.entries(this.rooms)) {
			if (!this.rowsRead.has(roomId) && this.isDue(room)) this.failed(roomId, 'its row is not in the room list');
		}
	}

	/** Room ids whose marks must be kept: their messages are not read yet. */
	ids(): Set<string> {
		return new Set(Object.keys(this.rooms));
	}

	/** What the items of this poll say about the rooms held back, if any. */
	notice(): string | undefined {
		const entries = Object.entries(this.rooms);
		if (entries.length === 0) return undefined;
		const named = entries.slice(0, ROOMS_NAMED).map(([roomId, room]) => `${roomId} (since ${room.since}: ${room.failure}; next try ${room.retryAt})`);
		const more = entries.length > ROOMS_NAMED ? ` and ${entries.length - ROOMS_NAMED} more` : '';
		return `The trigger could not read the messages of ${entries.length === 1 ? 'room' : `${entries.length} rooms`} ${named.join(', ')}${more}. Their new messages are held back, not lost: each arrives once when its room can be read again; the other rooms' messages are not held back.`;
	}

	/** The failing rooms to keep; absent when none. */
	state(): { failingRooms?: Record<string, FailingRoom> } {
		return Object.keys(this.rooms).length > 0 ? { failingRooms: this.rooms } : {};
	}
}

/**
 * The failure to show as a failed execution of the trigger, if due: a room failing for at least
 * SHOWN_AS_FAILED_AFTER_MS, when this n8n process showed none for SHOWN_AS_FAILED_AT_MOST_EVERY_MS.
 */
export function longFailureOf(failing: Record<string, FailingRoom>, nowMs: number, lastShownAtMs: number | undefined): { message: string; description: string } | undefined {
	if (lastShownAtMs !== undefined && nowMs - lastShownAtMs < SHOWN_AS_FAILED_AT_MOST_EVERY_MS) return undefined;
	const long = Object.entries(failing).filter(([, room]) => nowMs - Date.parse(room.since) >= SHOWN_AS_FAILED_AFTER_MS);
	if (long.length === 0) return undefined;
	const [roomId, room] = long[0];
	const others = long.length > 1 ? ` (and ${long.length - 1} more rooms)` : '';
	return {
		message: `Room ${roomId}${others} could not be read since ${room.since}: ${room.failure}`,
		description:
			`Its new client messages are held back, not lost: the trigger tries the room again (every hour by now; next ${room.retryAt}) and delivers each of them once when it can be read. ` +
			`The other rooms' messages go on arriving. Check that the API key's agency still has access to the room; a 5xx or a timeout is the service's. ` +
			`This error is shown at most once a day while rooms fail; the items of the trigger's runs name the failing rooms in their notice.`,
	};
}
