import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { AgencyInboxMessageTrigger } from '../../../nodes/AgencyInboxMessageTrigger/AgencyInboxMessageTrigger.node';
import { resetProcessMemory } from '../../../nodes/shared/processMemory';
import { SINGLE_READINGS, startSandbox } from '../../../sandbox';
import { TriggerWorkflow } from '../../helpers/engine';
import { sandboxControl } from '../../helpers/sandboxControl';
import { LoopbackProxy } from '../AgencyInboxProposalTrigger/loopbackProxy';
import { proposalsOfRoom, untilProposalsRead } from './roomProposalsHelpers';

type Sandbox = Awaited<ReturnType<typeof startSandbox>>;

const control = (sandbox: Sandbox, method: string, path: string, body?: unknown) => sandboxControl<IDataObject>(sandbox.origin, method, path, body);

async function clientMessage(sandbox: Sandbox, body: IDataObject): Promise<{ roomId: string; storyId: string; message: string }> {
	return (await control(sandbox, 'POST', 'changes', { kind: 'clientMessage', ...body })).data as { roomId: string; storyId: string; message: string };
}

async function agencyMessage(sandbox: Sandbox, body: IDataObject): Promise<{ roomId: string }> {
	return (await control(sandbox, 'POST', 'changes', { kind: 'agencyMessage', ...body })).data as { roomId: string };
}

interface LoggedRequest {
	method: string;
	path: string;
	query: Record<string, string>;
	status: number;
}

async function requestsMade(sandbox: Sandbox): Promise<LoggedRequest[]> {
	return ((await control(sandbox, 'GET', 'requests')) as unknown as { data: LoggedRequest[] }).data;
}

async function requestsTo(sandbox: Sandbox, pathPart: string): Promise<number> {
	return (await requestsMade(sandbox)).filter((request) => request.path.includes(pathPart)).length;
}

function triggerFor(sandbox: Sandbox, baseUrl = sandbox.url) {
	return new TriggerWorkflow({
		type: 'agencyInboxMessageTrigger',
		nodeType: new AgencyInboxMessageTrigger(),
		parameters: {},
		credentials: { agencyInboxApi: { apiKey: sandbox.apiKey, baseUrl, requestsPerMinute: 10_000 } },
	});
}

const texts = (result: INodeExecutionData[][] | null) =>
	(result?.[0] ?? []).map(({ json }) => `${(json.payload as IDataObject & { chat: { id: string } }).chat.id}: ${(json.message as IDataObject).text}`);

/** Activated, and the proposal list read through (the activation's full pass spans polls: roomProposals.test.ts). */
async function activated(sandbox: Sandbox, baseUrl?: string) {
	const trigger = triggerFor(sandbox, baseUrl);
	expect(await trigger.poll()).toBeNull();
	await untilProposalsRead(trigger);
	return trigger;
}

describe.each(SINGLE_READINGS.map(({ label, variants }) => [label, variants] as const))('Agency Inbox Message Trigger, reading %s', (_label, variants) => {
	let sandbox: Sandbox;

	beforeAll(async () => {
		// Pages of at most 3: every sweep and every room with a few messages spans several pages.
		sandbox = await startSandbox({ requestsPerMinute: 0, pageSize: 3, maxPageSize: 3, variants });
	});

	afterAll(async () => {
		await sandbox.close();
	});

	beforeEach(async () => {
		resetProcessMemory();
		await control(sandbox, 'POST', 'reset');
		await control(sandbox, 'DELETE', 'requests');
	});

	it('emits nothing historic at activation, then each new client message once, with the webhook item shape', async () => {
		const trigger = await activated(sandbox);
		expect(await trigger.poll()).toBeNull();
		const sent = await clientMessage(sandbox, { roomId: 'room-005', text: 'Is the budget flexible?' });
		const result = await trigger.poll();
		expect(texts(result)).toEqual(['room-005: Is the budget flexible?']);
		const item = result![0][0].json;
		const room = sandbox.state.rooms.find((candidate) => candidate.roomId === 'room-005')!;
		// Under every reading of vendorProposal.id: the room's most recently updated proposal by its chatRoomId.
		const proposals = proposalsOfRoom(sandbox.state, 'room-005');
		const agencyMembers = sandbox.state.members.filter((member) => room.roomUsers.some((participant) => participant.user.id === member.uid));
		expect(item).toMatchObject({
			event: 'chat.message.sent',
			payload: { proposal: { uid: proposals[0].uid }, message: { text: 'Is the budget flexible?' }, chat: { id: 'room-005' } },
			message: { storyId: sent.storyId, text: 'Is the budget flexible?' },
			room: { id: 'room-005', proposalUid: proposals[0].uid, proposals, proposalsComplete: true, agencyMembers: agencyMembers.map(({ uid, name }) => ({ uid, name })) },
		});
		expect((item.room as IDataObject).replyAs).toEqual(proposals[0].freelancer);
		expect(item.notice).toBeUndefined();
		expect(await trigger.poll()).toBeNull();
	});

	/**
	 * A poll stops early only where its own rows are in order of the last message and no other date of
	 * theirs could order the list otherwise. In order of creation the rows are not; in order of the last
	 * client message the seeded rooms whose last message is an agency member's break it; in order of sync
	 * time the background sync puts re-synced rooms on top. There every poll reads every page of rooms,
	 * and the first page again.
	 */
	it('an idle poll costs one request (pages of 3) where the list is in order of the last message; every page where the rows show another order', async () => {
		const trigger = await activated(sandbox);
		await clientMessage(sandbox, { roomId: 'room-002', text: 'hello' });
		expect(texts(await trigger.poll())).toHaveLength(1);
		await control(sandbox, 'DELETE', 'requests');
		expect(await trigger.poll()).toBeNull();
		const readsEveryPage = variants.roomSort !== 'lastStoryAt';
		expect(await requestsTo(sandbox, '/v1/')).toBe(readsEveryPage ? Math.ceil(sandbox.state.rooms.length / 3) + 1 : 1);
	});

	it('reads the proposals changed since the last sweep once per poll with client messages, looks nothing up, and sends no query parameter the service refused twice', async () => {
		const trigger = await activated(sandbox);
		await clientMessage(sandbox, { roomId: 'room-006', text: 'one' });
		expect(texts(await trigger.poll())).toEqual(['room-006: one']);
		await clientMessage(sandbox, { roomId: 'room-006', text: 'two' });
		await clientMessage(sandbox, { roomId: 'room-009', text: 'three' });
		expect(texts(await trigger.poll())).toEqual(['room-006: two', 'room-009: three']);
		const requests = await requestsMade(sandbox);
		expect(requests.filter((request) => request.path.includes('/v1/agency/proposals/'))).toEqual([]);
		const changesRead = requests.filter((request) => request.path.endsWith('/v1/agency/proposals') && request.query.updatedSince !== undefined && request.status === 200);
		expect(changesRead).toHaveLength(2);
		// A refused page size costs one 400 per endpoint, answered by the same request without it.
		const refused = requests.filter((request) => request.status === 400);
		expect(refused.every((request) => request.query.pageSize !== undefined)).toBe(true);
		const refusedEndpoints = refused.map((request) => request.path.replace(/rooms\/[^/]+\/stories/, 'rooms/{id}/stories'));
		expect(new Set(refusedEndpoints).size).toBe(refusedEndpoints.length);
		expect(refused.length > 0).toBe(variants.unnamedQueryParameters === 'rejected');
	});

	it('two client messages in one room between two polls both arrive, and messages across rooms arrive oldest first', async () => {
		const trigger = await activated(sandbox);
		await clientMessage(sandbox, { roomId: 'room-004', text: 'first' });
		await clientMessage(sandbox, { roomId: 'room-007', text: 'other room' });
		await clientMessage(sandbox, { roomId: 'room-004', text: 'second' });
		expect(texts(await trigger.poll())).toEqual(['room-004: first', 'room-007: other room', 'room-004: second']);
		expect(await trigger.poll()).toBeNull();
	});

	it("the agency's own messages start nothing, also in a room far down the list; the client's next one does", async () => {
		const trigger = await activated(sandbox);
		const room = sandbox.state.rooms[sandbox.state.rooms.length - 1];
		await agencyMessage(sandbox, { roomId: room.roomId, text: 'Our reply' });
		expect(await trigger.poll()).toBeNull();
		await clientMessage(sandbox, { roomId: room.roomId, text: 'Thanks' });
		await agencyMessage(sandbox, { roomId: room.roomId, text: 'You are welcome' });
		expect(texts(await trigger.poll())).toEqual([`${room.roomId}: Thanks`]);
		expect(await trigger.poll()).toBeNull();
	});

	it('two client messages in one room sent at once (count 2), and a first message in a new room', async () => {
		const trigger = await activated(sandbox);
		await clientMessage(sandbox, { roomId: 'room-003', text: 'twice', count: 2 });
		const created = await clientMessage(sandbox, { newRoom: true, text: 'hello from a new client' });
		expect(texts(await trigger.poll())).toEqual(['room-003: twice', 'room-003: twice', `${created.roomId}: hello from a new client`]);
		expect(await trigger.poll()).toBeNull();
	});

	it('after an activation on an empty page of history, an older room that gets a message is read from the floor only', async () => {
		const trigger = await activated(sandbox);
		const oldest = [...sandbox.state.rooms].sort((a, b) => (a.lastStoryAt ?? '').localeCompare(b.lastStoryAt ?? ''))[0];
		await clientMessage(sandbox, { roomId: oldest.roomId, text: 'back after a long time' });
		expect(texts(await trigger.poll())).toEqual([`${oldest.roomId}: back after a long time`]);
	});

	it('a message written while a poll pages through the rooms arrives at the next poll', async () => {
		const proxy = new LoopbackProxy(sandbox.origin);
		await proxy.start();
		try {
			const trigger = await activated(sandbox, `${proxy.origin}/service`);
			const rooms = sandbox.state.rooms.slice(-6).map((room) => room.roomId);
			for (const roomId of rooms) await clientMessage(sandbox, { roomId, text: `to ${roomId}` });
			// rooms[0] has the oldest of the six messages: on the second page of 3 until it gets another.
			let injected = false;
			proxy.beforeForward = async ({ path, query }) => {
				if (!injected && path.endsWith('/v1/master-inbox/rooms') && query.has('pageCursor')) {
					injected = true;
					await clientMessage(sandbox, { roomId: rooms[0], text: 'while paging' });
				}
			};
			const first = texts(await trigger.poll());
			expect(injected).toBe(true);
			const all = [...first, ...texts(await trigger.poll())];
			expect(all.sort()).toEqual([...rooms.map((roomId) => `${roomId}: to ${roomId}`), `${rooms[0]}: while paging`].sort());
			expect(await trigger.poll()).toBeNull();
		} finally {
			await proxy.close();
		}
	});
});
