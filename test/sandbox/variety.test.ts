/** The sandbox varies what the spec leaves open, so tests catch code that assumes the friendly case. */
import { seedState } from '../../sandbox/seed';

const state = seedState(42, 300);
const agencyIds = new Set(state.members.map((member) => member.uid));

it('has rooms owned by the client, by nobody and by an agency member', () => {
	const owners = state.rooms.map((room) => (room.owner === null ? 'none' : agencyIds.has(room.owner.user.id) ? 'agency' : 'client'));
	expect(new Set(owners)).toEqual(new Set(['client', 'none', 'agency']));
	const ownedByAnotherMember = state.rooms.filter((room) => room.owner && agencyIds.has(room.owner.user.id) && room.owner.user.id !== room.vendorProposal?.userId);
	expect(ownedByAnotherMember.length).toBeGreaterThan(10);
});

it('has rooms with several agency members, and one client with several rooms', () => {
	expect(state.rooms.filter((room) => room.roomUsers.filter((p) => agencyIds.has(p.user.id)).length >= 3).length).toBeGreaterThan(10);
	const roomsPerClient = new Map<string, number>();
	for (const room of state.rooms) roomsPerClient.set(room.roomUsers[0].user.id, (roomsPerClient.get(room.roomUsers[0].user.id) ?? 0) + 1);
	expect(Math.max(...roomsPerClient.values())).toBeGreaterThan(1);
});

it('has two clients of the same name', () => {
	const clients = new Map(state.rooms.map((room) => [room.roomUsers[0].user.id, room.roomUsers[0].user.name]));
	expect(new Set(clients.values()).size).toBeLessThan(clients.size);
});

it("has proposals without a chat room, and each proposal's freelancer takes part in its room", () => {
	expect(state.proposals.filter((record) => record.proposal.chatRoomId === null).length).toBeGreaterThan(20);
	for (const record of state.proposals.filter((candidate) => candidate.proposal.chatRoomId !== null)) {
		const room = state.rooms.find((candidate) => candidate.roomId === record.proposal.chatRoomId)!;
		expect(room.roomUsers.some((participant) => participant.user.id === record.freelancer.uid)).toBe(true);
	}
});
