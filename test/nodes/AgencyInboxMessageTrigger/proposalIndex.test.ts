/**
 * The Message Trigger's index of proposals by chat room (nodes/AgencyInboxMessageTrigger/proposalIndex.ts):
 * rows taken in any order and repeated, proposals re-linked, and what it answers once it had to drop
 * some to stay within its bounds. The engine tests against the sandbox are in roomProposals.test.ts.
 */
import type { ProposalIndexState } from '../../../nodes/AgencyInboxMessageTrigger/proposalIndex';
import {
	loadProposalIndex,
	MAX_PROPOSALS_KEPT,
	MAX_PROPOSALS_PER_ROOM,
	newProposalIndex,
	roomInIndex,
	takeIntoIndex,
} from '../../../nodes/AgencyInboxMessageTrigger/proposalIndex';
import type { ProposalRecord } from '../../../nodes/shared/proposalSweep';

const at = (second: number) => new Date(Date.parse('2026-01-01T00:00:00.000Z') + second * 1000).toISOString();

function row(uid: string, roomId: string | null, updatedSecond: number | null, freelancer = 'mem-1'): ProposalRecord {
	return {
		proposal: { uid, createdAt: at(0), updatedAt: updatedSecond === null ? null : at(updatedSecond), status: 'SUBMITTED', chatRoomId: roomId },
		freelancer: { uid: freelancer, name: `Name of ${freelancer}` },
	};
}

const uidsIn = (index: ProposalIndexState, roomId: string) => {
	const room = roomInIndex(index, roomId);
	return room.known ? room.proposals.map(([uid]) => uid) : 'unknown';
};

describe('the index of proposals by chat room', () => {
	it('lists a room\'s proposals most recently updated first (a proposal without updatedAt last), whatever order the rows come in', () => {
		const index = newProposalIndex(new Date(at(100)));
		takeIntoIndex(index, [row('p1', 'r1', 5), row('p2', 'r1', null), row('p3', 'r1', 9), row('p4', 'r2', 1), row('p5', 'r1', 9)]);
		expect(uidsIn(index, 'r1')).toEqual(['p5', 'p3', 'p1', 'p2']);
		expect(uidsIn(index, 'r2')).toEqual(['p4']);
		expect(uidsIn(index, 'r3')).toEqual([]);
		expect(index.freelancers).toEqual({ 'mem-1': 'Name of mem-1' });
	});

	it('moves a re-linked proposal, drops one without a room, and ignores a row older than what it keeps', () => {
		const index = newProposalIndex(new Date(at(100)));
		takeIntoIndex(index, [row('p1', 'r1', 5), row('p2', 'r1', 6)]);
		takeIntoIndex(index, [row('p2', 'r2', 7)]);
		expect([uidsIn(index, 'r1'), uidsIn(index, 'r2')]).toEqual([['p1'], ['p2']]);
		// A repeated older row (a restarted sweep) does not move it back.
		takeIntoIndex(index, [row('p2', 'r1', 6)]);
		expect([uidsIn(index, 'r1'), uidsIn(index, 'r2')]).toEqual([['p1'], ['p2']]);
		takeIntoIndex(index, [row('p1', null, 8)]);
		expect(index.rooms.r1).toBeUndefined();
		expect(uidsIn(index, 'r1')).toEqual([]);
	});

	it(`lists at most ${MAX_PROPOSALS_PER_ROOM} a room and says more exist; its newest is known while it is later than every one dropped`, () => {
		const index = newProposalIndex(new Date(at(1000)));
		takeIntoIndex(index, Array.from({ length: MAX_PROPOSALS_PER_ROOM + 2 }, (_, n) => row(`p${String(n).padStart(2, '0')}`, 'r1', n + 1)));
		const room = roomInIndex(index, 'r1');
		expect(room).toMatchObject({ known: true, more: true });
		expect(room.known && room.proposals.map(([uid]) => uid)).toEqual(Array.from({ length: MAX_PROPOSALS_PER_ROOM }, (_, n) => `p${String(MAX_PROPOSALS_PER_ROOM + 1 - n).padStart(2, '0')}`));
		// Every listed one moves away: the room's remaining proposals are among those dropped, not known.
		takeIntoIndex(index, room.known ? room.proposals.map(([uid]) => row(uid, 'r2', 500)) : []);
		expect(uidsIn(index, 'r1')).toBe('unknown');
		// A later proposal in the room is its newest again.
		takeIntoIndex(index, [row('p-new', 'r1', 600)]);
		expect(uidsIn(index, 'r1')).toEqual(['p-new']);
	});

	it(`keeps at most ${MAX_PROPOSALS_KEPT} proposals: the rooms whose proposals changed last; a room it dropped is not known until a later proposal of it arrives`, () => {
		const index = newProposalIndex(new Date(at(100_000)));
		takeIntoIndex(index, Array.from({ length: MAX_PROPOSALS_KEPT + 5 }, (_, n) => row(`p${n}`, `r${n}`, n, `mem-${n}`)));
		expect(Object.keys(index.rooms)).toHaveLength(MAX_PROPOSALS_KEPT);
		expect(index.dropped).toBe(at(4));
		expect(Object.keys(index.freelancers)).toHaveLength(MAX_PROPOSALS_KEPT);
		expect(roomInIndex(index, 'r0')).toEqual({ known: false });
		expect(roomInIndex(index, 'a room never seen')).toEqual({ known: false });
		expect(uidsIn(index, 'r5')).toEqual(['p5']);
		// A proposal of a dropped room, older than what was dropped: still not known (and the first to go again).
		takeIntoIndex(index, [row('p-old', 'r0', 3)]);
		expect(uidsIn(index, 'r0')).toBe('unknown');
		// Later than everything dropped: the room's newest, and more may exist.
		takeIntoIndex(index, [row('p-later', 'r0', 200_000)]);
		expect(roomInIndex(index, 'r0')).toMatchObject({ known: true, more: true });
		expect(uidsIn(index, 'r0')).toEqual(['p-later']);
		expect(Object.values(index.rooms).reduce((sum, room) => sum + room.p.length, 0)).toBeLessThanOrEqual(MAX_PROPOSALS_KEPT);
	});

	it('reloads what it stored, and starts anew from anything else', () => {
		const index = newProposalIndex(new Date(at(100)));
		takeIntoIndex(index, [row('p1', 'r1', 5)]);
		expect(loadProposalIndex(JSON.parse(JSON.stringify(index)))).toEqual(index);
		expect(loadProposalIndex({ ...index, rooms: { r1: { p: [['p1', 'SUBMITTED', 'not a time', null]] } } })).toBeUndefined();
		expect(loadProposalIndex({ ...index, since: { watermark: { at: 'x', uids: [] } } })).toBeUndefined();
		// The state of the version before this index: a lookup per room.
		expect(loadProposalIndex({ 'room-001': { vendorId: 'prop-0001', proposal: null } })).toBeUndefined();
	});
});
