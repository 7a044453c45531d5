/**
 * The Message Trigger's activation: its first poll, which n8n awaits before it reports the workflow
 * published. Nothing that exists then is emitted; it notes the history line and where the list stands.
 */
import type { CanContinue } from '../shared/guardedPoll';
import type { Mark } from '../shared/marks';
import { higherMark } from '../shared/marks';
import { pagesOf } from '../shared/pagination';
import { serviceTimeOf } from '../shared/transport';
import { inLastMessageOrder, mayStopBelow, rowsOf, showsSameTimes, topOf } from './roomListOrder';
import { newSweep } from './roomSweep';
import type { MessageTriggerState } from './state';
import type { FetchRoomsPage, RoomRow } from './types';

/**
 * How long the activation pages through the room list. n8n awaits the activation's poll before it
 * reports the workflow published, and n8n 2.41 fails a publication whose activation takes more than
 * 84 s. The last page asked for within these 20 s may wait up to one rate-limit window (60 s) for the
 * request budget: 20 + 60 s stays below the 84.
 */
export const ACTIVATION_PAGING_MS = 20_000;

/**
 * The newest message time of the rows read: every message written later has a time after it. When the
 * activation was cut, rooms it did not read may hold messages written before it but newer than those
 * rows: then the line is the activation's start, if later, by the service's clock (the Date header of
 * its first answer: message times come from that clock), else by n8n's (docs/assumptions.md).
 */
function historyLineOf(rowsRead: RoomRow[], cutAtMs: number | undefined): Mark | null {
	const newestRead = topOf(rowsRead);
	if (cutAtMs === undefined) return newestRead ?? null;
	return higherMark(newestRead, { at: new Date(cutAtMs).toISOString(), uids: [] });
}

/**
 * The first poll: nothing that exists now is emitted. It reads the first page and further pages
 * until the rows it read show that the rooms below hold nothing newer (the rule of `mayStopBelow`),
 * or to the end of the list: in an order other than the last message's, a room far down may hold the
 * newest message. After several pages it reads the list again from the top down to a room whose row
 * shows the times it showed before: a room that moved above the pages while they were read (a new
 * message, a re-sync) is above that one. The history line is the newest message time of the rows it
 * read (null: no room has a message). It pages until `canContinue` says no (ACTIVATION_PAGING_MS):
 * then the next polls go on with the list from where it stopped, as with a poll cut at its deadline,
 * and the history line is at least its start by the service's clock (`historyLineOf`).
 */
export async function bootstrapMessages(fetchRooms: FetchRoomsPage, now: () => number, canContinue: CanContinue = () => true): Promise<MessageTriggerState> {
	const startedAt = now();
	let serviceStartedAt: number | undefined;
	const sweep: RoomRow[] = [];
	let firstPageTop: Mark | undefined;
	let pages = 0;
	let resumeAt: string | undefined;
	for await (const { page, next } of pagesOf(fetchRooms)) {
		const rows = rowsOf(page);
		if (pages++ === 0) {
			firstPageTop = topOf(rows);
			serviceStartedAt = serviceTimeOf(page);
		}
		sweep.push(...rows);
		const top = topOf(sweep);
		if (top && mayStopBelow([sweep], top)) break;
		if (next !== undefined && !canContinue()) {
			resumeAt = next;
			break;
		}
	}
	const again = pages > 1 && resumeAt === undefined ? await readTopAgain(fetchRooms, sweep, canContinue) : undefined;
	const reads = again ? [sweep, again.rows] : [sweep];
	const cut = resumeAt !== undefined || again?.cut === true;
	const history = historyLineOf(reads.flat(), cut ? (serviceStartedAt ?? startedAt) : undefined);
	const contradiction = !inLastMessageOrder(reads);
	const begun: Pick<MessageTriggerState, 'allPagesReadAt' | 'sweep'> =
		resumeAt === undefined ? { allPagesReadAt: new Date(startedAt).toISOString() } : { sweep: { cursor: resumeAt, ...newSweep(startedAt, firstPageTop), contradiction } };
	return { seq: 1, history, floor: history, rooms: {}, mustReadAllPages: contradiction, ...begun, proposals: {} };
}

/**
 * The list again from the top down to a room whose row shows the times it showed in `sweep`; `cut`:
 * the deadline came first, so a room that moved above the pages while they were read may be unread.
 */
async function readTopAgain(fetchRooms: FetchRoomsPage, sweep: RoomRow[], canContinue: CanContinue): Promise<{ rows: RoomRow[]; cut: boolean }> {
	const seen = new Map(sweep.map((room) => [room.roomId, room]));
	const rows: RoomRow[] = [];
	if (!canContinue()) return { rows, cut: true };
	for await (const { page, next } of pagesOf(fetchRooms)) {
		const pageRows = rowsOf(page);
		rows.push(...pageRows);
		if (pageRows.some((room) => seen.has(room.roomId) && showsSameTimes(room, seen.get(room.roomId)!))) break;
		if (next !== undefined && !canContinue()) return { rows, cut: true };
	}
	return { rows, cut: false };
}
