import type { FetchProposal, RoomRow } from './types';

/** A room's proposal as the service confirmed it. */
export interface RoomProposal {
	uid: string;
	freelancer: { uid: string; name: string | null } | null;
}

/** What a lookup of a room's `vendorProposal.id` found: the proposal, or null when it is not this room's. */
export interface ProposalLookup {
	vendorId: string;
	proposal: RoomProposal | null;
}

/** Most lookups kept; past it the oldest are dropped (looked up again when their room gets a message). */
export const MAX_PROPOSAL_LOOKUPS = 500;

const vendorIdOf = (room: RoomRow) => (typeof room.vendorProposal?.id === 'string' && room.vendorProposal.id !== '' ? room.vendorProposal.id : undefined);

/**
 * The room's proposal. The spec links a proposal to its room by the proposal's `chatRoomId`; it does
 * not say that a room's `vendorProposal.id` (a marketplace-side id) is a proposal's `uid`. So the id
 * is looked up and taken only when the service answers with a proposal whose `chatRoomId` is this
 * room; a 404 or another room's proposal means the room's proposal is not known. One lookup per
 * room and vendor id, kept in `lookups`.
 */
export async function proposalOfRoom(room: RoomRow, lookups: Record<string, ProposalLookup>, fetchProposal: FetchProposal): Promise<RoomProposal | null> {
	const vendorId = vendorIdOf(room);
	if (vendorId === undefined) return null;
	const known = lookups[room.roomId];
	if (known?.vendorId === vendorId) return known.proposal;
	const record = await fetchProposal(vendorId);
	const uid = record?.proposal?.uid;
	const confirmed = typeof uid === 'string' && uid !== '' && record?.proposal?.chatRoomId === room.roomId;
	const freelancer = record?.freelancer?.uid ? { uid: record.freelancer.uid, name: record.freelancer.name ?? null } : null;
	const proposal = confirmed ? { uid, freelancer } : null;
	delete lookups[room.roomId];
	lookups[room.roomId] = { vendorId, proposal };
	const roomIds = Object.keys(lookups);
	for (const roomId of roomIds.slice(0, Math.max(0, roomIds.length - MAX_PROPOSAL_LOOKUPS))) delete lookups[roomId];
	return proposal;
}

/** Why a room that names a proposal has none in the item, for the item's `notice`. */
export function unconfirmedProposalNotice(room: RoomRow): string | undefined {
	const vendorId = vendorIdOf(room);
	if (vendorId === undefined) return undefined;
	return `The room names the marketplace proposal ${vendorId}, but the service has no proposal of this agency under that id whose chat room is this room, so payload.proposal is null. Reply through room.replyAs, or look the proposal up by its chatRoomId (Proposal → Get Many).`;
}
