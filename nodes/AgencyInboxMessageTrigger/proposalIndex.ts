/**
 * The agency's proposals by chat room, as the Message Trigger keeps them in its state: the relation the
 * spec states is the proposal's `chatRoomId`, and the proposal list has no filter by room, so the trigger
 * reads the list once (rule 5's full pass) and then each change (`updatedSince`), and keeps per room
 * what an item shows. Bounded: MAX_PROPOSALS_PER_ROOM a room and MAX_PROPOSALS_KEPT in all, the rooms
 * whose proposals changed last kept. What it dropped it remembers as a time ("floor"): a room's newest
 * kept proposal is the room's most recently updated only when it is later than every proposal dropped.
 */
import { timeOf } from '../shared/marks';
import type { ProposalRecord } from '../shared/proposalSweep';
import type { WatermarkState } from '../shared/proposalWatermark';
import { watermarkStateFrom } from '../shared/proposalWatermark';

/** One proposal as kept: uid, status, updatedAt, the freelancer's uid. A tuple keeps the state small. */
export type KeptProposal = [uid: string, status: string | null, updatedAt: string | null, freelancerUid: string | null];

export interface IndexedRoom {
	/** The room's proposals, most recently updated first (at the same time, the higher uid first). */
	p: KeptProposal[];
	/** Present once a proposal of the room was dropped: the latest updatedAt among those (null: all had none). */
	f?: string | null;
}

export interface ProposalIndexState {
	rooms: Record<string, IndexedRoom>;
	/** Names of the proposals' freelancers, by uid. */
	freelancers: Record<string, string | null>;
	/** Present once whole rooms were dropped: the latest updatedAt of their proposals. */
	dropped?: string | null;
	/** The full pass without updatedSince, while it goes on: where it resumes, rows read, meta.total. */
	pass?: { cursor?: string; read: number; total?: number };
	/** The updatedSince sweeps: from the clock noted before the full pass, then the highest updatedAt received. */
	since: WatermarkState;
	/** Why the last read of the list failed; cleared by the next one that succeeds. */
	failure?: string;
}

/** Proposals listed per room; past it the least recently updated are dropped (the item says more exist). */
export const MAX_PROPOSALS_PER_ROOM = 10;
/** Proposals kept in all; past it the rooms whose newest proposal is the oldest are dropped. */
export const MAX_PROPOSALS_KEPT = 2_000;

/** A time to order by; no updatedAt ranks below every time. */
const rankOf = (updatedAt: string | null | undefined) => (typeof updatedAt === 'string' ? timeOf(updatedAt) : -Infinity);

const laterFirst = (a: KeptProposal, b: KeptProposal) => rankOf(b[2]) - rankOf(a[2]) || (a[0] < b[0] ? 1 : a[0] > b[0] ? -1 : 0);

/** The later of two floors; a floor of undefined (nothing dropped) is below every other. */
function laterFloor(a: string | null | undefined, b: string | null): string | null {
	if (a === undefined) return b;
	return rankOf(b) > rankOf(a) ? b : a;
}

/** A new index: the full pass to read, and `updatedSince` from `now`, noted before it (rule 5). */
export function newProposalIndex(now: Date): ProposalIndexState {
	return { rooms: {}, freelancers: {}, pass: { read: 0 }, since: { watermark: { at: now.toISOString(), uids: [] } } };
}

const isOptionalTime = (value: unknown) => value === null || (typeof value === 'string' && !Number.isNaN(timeOf(value)));

const isKept = (value: unknown): value is KeptProposal =>
	Array.isArray(value) &&
	value.length === 4 &&
	typeof value[0] === 'string' &&
	(value[1] === null || typeof value[1] === 'string') &&
	isOptionalTime(value[2]) &&
	(value[3] === null || typeof value[3] === 'string');

const isIndexedRoom = (value: unknown): value is IndexedRoom => {
	const room = value as IndexedRoom | undefined;
	return Array.isArray(room?.p) && room.p.every(isKept) && (room.f === undefined || isOptionalTime(room.f));
};

/** A stored index, checked; undefined when it is not one (the trigger then reads the list anew). */
export function loadProposalIndex(value: unknown): ProposalIndexState | undefined {
	const stored = value as Partial<ProposalIndexState> | undefined;
	const since = watermarkStateFrom(stored?.since);
	if (!stored || !since || typeof stored.rooms !== 'object' || stored.rooms === null) return undefined;
	if (!Object.values(stored.rooms).every(isIndexedRoom) || (stored.dropped !== undefined && !isOptionalTime(stored.dropped))) return undefined;
	const pass = stored.pass;
	if (pass !== undefined && (typeof pass.read !== 'number' || (pass.cursor !== undefined && typeof pass.cursor !== 'string'))) return undefined;
	return {
		rooms: stored.rooms,
		freelancers: typeof stored.freelancers === 'object' && stored.freelancers !== null ? stored.freelancers : {},
		...(stored.dropped !== undefined ? { dropped: stored.dropped } : {}),
		...(pass !== undefined ? { pass } : {}),
		since,
		...(typeof stored.failure === 'string' ? { failure: stored.failure } : {}),
	};
}

const roomIdOf = (record: ProposalRecord) => (typeof record.proposal.chatRoomId === 'string' && record.proposal.chatRoomId !== '' ? record.proposal.chatRoomId : null);

/** Drops a room's least recently updated proposals past MAX_PROPOSALS_PER_ROOM, raising its floor. */
function trim(room: IndexedRoom): void {
	while (room.p.length > MAX_PROPOSALS_PER_ROOM) room.f = laterFloor(room.f, room.p.pop()![2]);
}

/** The latest updatedAt a room's proposals show, kept or dropped (null: none has one). */
function newestOf(room: IndexedRoom): string | null {
	const kept = room.p[0]?.[2] ?? null;
	return room.f === undefined ? kept : laterFloor(room.f, kept);
}

/** Drops whole rooms, those whose newest proposal is the oldest first, until at most MAX_PROPOSALS_KEPT are kept. */
function keepWithinBound(index: ProposalIndexState): void {
	let kept = Object.values(index.rooms).reduce((sum, room) => sum + room.p.length, 0);
	if (kept <= MAX_PROPOSALS_KEPT) return;
	const oldestFirst = Object.entries(index.rooms).sort(([, a], [, b]) => rankOf(newestOf(a)) - rankOf(newestOf(b)));
	for (const [roomId, room] of oldestFirst) {
		if (kept <= MAX_PROPOSALS_KEPT) break;
		kept -= room.p.length;
		index.dropped = laterFloor(index.dropped, newestOf(room));
		delete index.rooms[roomId];
	}
}

/** Forgets the names of freelancers no kept proposal names. */
function forgetUnusedFreelancers(index: ProposalIndexState): void {
	const named = new Set(Object.values(index.rooms).flatMap((room) => room.p.map((proposal) => proposal[3])));
	for (const uid of Object.keys(index.freelancers)) if (!named.has(uid)) delete index.freelancers[uid];
}

/**
 * Takes rows of the proposal list into the index (changes it in place): each proposal under the room
 * its `chatRoomId` names now, out of the room it was kept under before (a proposal re-linked, or
 * without a room now). Rows repeat (the inclusive boundary, a restarted sweep, rule 4): a row older than
 * what is kept for its uid changes nothing.
 */
export function takeIntoIndex(index: ProposalIndexState, records: ProposalRecord[]): void {
	const keptIn = new Map<string, string>();
	for (const [roomId, room] of Object.entries(index.rooms)) for (const [uid] of room.p) keptIn.set(uid, roomId);
	const touched = new Set<string>();
	for (const record of records) {
		const uid = record.proposal?.uid;
		if (typeof uid !== 'string' || uid === '') continue;
		const updatedAt = isOptionalTime(record.proposal.updatedAt) ? record.proposal.updatedAt : null;
		const before = keptIn.get(uid);
		if (before !== undefined) {
			const room = index.rooms[before];
			const kept = room.p.find(([keptUid]) => keptUid === uid)!;
			if (rankOf(kept[2]) > rankOf(updatedAt)) continue;
			room.p = room.p.filter(([keptUid]) => keptUid !== uid);
			if (room.p.length === 0 && room.f === undefined) delete index.rooms[before];
			keptIn.delete(uid);
		}
		const roomId = roomIdOf(record);
		if (roomId === null) continue;
		const freelancer = record.freelancer;
		const freelancerUid = typeof freelancer?.uid === 'string' && freelancer.uid !== '' ? freelancer.uid : null;
		if (freelancerUid !== null) index.freelancers[freelancerUid] = typeof freelancer?.name === 'string' ? freelancer.name : null;
		// A room first seen after rooms were dropped may be one of them: its older proposals are not known.
		const room = (index.rooms[roomId] ??= index.dropped === undefined ? { p: [] } : { p: [], f: index.dropped });
		room.p.push([uid, typeof record.proposal.status === 'string' ? record.proposal.status : null, updatedAt, freelancerUid]);
		keptIn.set(uid, roomId);
		touched.add(roomId);
	}
	for (const roomId of touched) {
		const room = index.rooms[roomId];
		if (!room) continue;
		room.p.sort(laterFirst);
		trim(room);
	}
	keepWithinBound(index);
	forgetUnusedFreelancers(index);
}

/** What the index knows of one room. */
export type RoomInIndex =
	| { known: true; proposals: KeptProposal[]; more: boolean }
	/** The room's proposals were dropped (in part): its newest kept one may not be its most recently updated. */
	| { known: false };

export function roomInIndex(index: ProposalIndexState, roomId: string): RoomInIndex {
	const room = index.rooms[roomId];
	if (!room) return index.dropped === undefined ? { known: true, proposals: [], more: false } : { known: false };
	if (room.f === undefined) return { known: true, proposals: room.p, more: false };
	if (room.p.length === 0 || rankOf(room.p[0][2]) <= rankOf(room.f)) return { known: false };
	return { known: true, proposals: room.p, more: true };
}
