/** Every operation through n8n-core's engine against the sandbox: parameters reach the service, records come back. */
import { AgencyInbox } from '../../../nodes/AgencyInbox/AgencyInbox.node';
import { TriggerWorkflow } from '../../helpers/engine';
import { sandboxControl } from '../../helpers/sandboxControl';
import {
	byId,
	control,
	credentialFor,
	jsonOf,
	runAgencyInbox,
	type Sandbox,
	takeRequests,
	useSandbox,
} from './fixtures';

const currentSandbox = useSandbox();
let sandbox: Sandbox;
beforeEach(() => {
	sandbox = currentSandbox();
});

describe('read operations', () => {
	it('Agency Get returns the profile record, not the envelope', async () => {
		const result = await runAgencyInbox(sandbox, { resource: 'agency', operation: 'get' });
		expect(jsonOf(result)).toEqual([sandbox.state.agency]);
		expect(await takeRequests(sandbox)).toMatchObject([{ method: 'GET', path: '/v1/agency', query: {}, status: 200 }]);
	});

	it('Member Get Many sends the role filter', async () => {
		const result = await runAgencyInbox(sandbox, {
			resource: 'member',
			operation: 'getAll',
			returnAll: true,
			filters: { role: 'business_manager' },
		});
		const expected = sandbox.state.members.filter((member) => member.role === 'business_manager');
		expect(jsonOf(result).map((member) => member.uid)).toEqual(expected.map((member) => member.uid));
		const [request] = await takeRequests(sandbox);
		expect(request).toMatchObject({ path: '/v1/agency/members', query: { role: 'business_manager' } });
	});

	it('Invitation Get Many sends the status filter', async () => {
		const result = await runAgencyInbox(sandbox, {
			resource: 'invitation',
			operation: 'getAll',
			returnAll: true,
			filters: { status: 'pending' },
		});
		expect(result.items.length).toBeGreaterThan(0);
		const requests = await takeRequests(sandbox);
		expect(requests[0]).toMatchObject({ path: '/v1/agency/invitations', query: { status: 'pending' } });
	});

	it('Proposal Get fetches by URL-encoded ID, full or simplified', async () => {
		const full = await runAgencyInbox(sandbox, { resource: 'proposal', operation: 'get', proposalId: byId('prop-0002') });
		expect(jsonOf(full)).toEqual([sandbox.state.proposals[1]]);
		const simple = await runAgencyInbox(sandbox, {
			resource: 'proposal',
			operation: 'get',
			proposalId: { __rl: true, mode: 'list', value: 'prop-0002' },
			simplify: true,
		});
		expect(jsonOf(simple)[0]).toMatchObject({ uid: 'prop-0002', jobTitle: expect.any(String), chatRoomId: expect.any(String) });
		expect(Object.keys(jsonOf(simple)[0])).not.toContain('proposal');
		await runAgencyInbox(sandbox, { resource: 'proposal', operation: 'get', proposalId: byId('a b/c?d') });
		const paths = (await takeRequests(sandbox)).map((request) => request.path);
		expect(paths).toEqual(['/v1/agency/proposals/prop-0002', '/v1/agency/proposals/prop-0002', '/v1/agency/proposals/a%20b%2Fc%3Fd']);
	});

	it("Proposal Get Many sends status and Updated Since with the workflow time zone's offset", async () => {
		const result = await runAgencyInbox(
			sandbox,
			{
				resource: 'proposal',
				operation: 'getAll',
				returnAll: true,
				filters: { status: 'submitted', updatedSince: '2020-07-01T10:00:00' },
				simplify: true,
			},
			{ timezone: 'Europe/Berlin' },
		);
		const [request] = await takeRequests(sandbox);
		expect(request.query).toEqual({ status: 'submitted', updatedSince: '2020-07-01T10:00:00+02:00' });
		expect(result.error).toBeUndefined();
		expect(result.items.length).toBeGreaterThan(0);
		expect(jsonOf(result).every((row) => String(row.status).toLowerCase() === 'submitted')).toBe(true);
	});

	it('Chat Room Get Many sends search, participants, sort, client messages only and page size', async () => {
		const result = await runAgencyInbox(sandbox, {
			resource: 'chatRoom',
			operation: 'getAll',
			limit: 3,
			filters: { search: 'a', participants: 'mem-001', clientMessageOnly: false },
			options: { sort: 'date-asc', pageSize: 7 },
		});
		expect(result.items.length).toBeGreaterThan(0);
		const [request] = await takeRequests(sandbox);
		expect(request).toMatchObject({
			path: '/v1/master-inbox/rooms',
			query: { search: 'a', participants: 'mem-001', clientMessageOnly: 'false', sort: 'date-asc', pageSize: '7' },
		});
	});

	it('Message Get Many reads the room by locator, with search', async () => {
		const roomId = sandbox.state.rooms[0].roomId;
		const stories = sandbox.state.stories[roomId];
		const word = stories[0].message.split(' ')[0];
		const result = await runAgencyInbox(sandbox, {
			resource: 'message',
			operation: 'getAll',
			roomId: byId(roomId),
			returnAll: true,
			filters: { search: word },
		});
		expect(result.items.length).toBeGreaterThan(0);
		expect(jsonOf(result).every((story) => String(story.message).toLowerCase().includes(word.toLowerCase()))).toBe(true);
		const [request] = await takeRequests(sandbox);
		expect(request).toMatchObject({ path: `/v1/master-inbox/rooms/${roomId}/stories`, query: { search: word } });
	});
});

describe('write operations', () => {
	it('Message Send posts the message as the chosen freelancer', async () => {
		const result = await runAgencyInbox(sandbox, {
			resource: 'message',
			operation: 'send',
			roomId: byId('room-001'),
			freelancerUid: byId('mem-001'),
			message: 'Thanks, we can start Monday.',
		});
		expect(jsonOf(result)).toEqual([expect.objectContaining({ userId: 'mem-001', message: 'Thanks, we can start Monday.' })]);
		const { data: sent } = await control<{ data: Array<{ message: string }> }>(sandbox, 'GET', 'messages');
		expect(sent).toHaveLength(1);
		expect(await takeRequests(sandbox)).toMatchObject([{ method: 'POST', path: '/v1/master-inbox/rooms/room-001/stories', status: 200 }]);
	});

	it('Bid Intent Cancel cancels a scheduled bid', async () => {
		const result = await runAgencyInbox(sandbox, { resource: 'bidIntent', operation: 'cancel', bidIntentId: 'bid-001' });
		expect(jsonOf(result)).toEqual([{ success: true }]);
		const { data: bids } = await control<{ data: Array<{ id: string; status: string }> }>(sandbox, 'GET', 'bid-intents');
		expect(bids.find((bid) => bid.id === 'bid-001')?.status).toBe('cancelled');
		expect(await takeRequests(sandbox)).toMatchObject([{ method: 'DELETE', path: '/v1/bid-intents/bid-001' }]);
	});
});

describe('lists', () => {
	it('Return All over many pages equals the full set, without duplicates', async () => {
		const result = await runAgencyInbox(sandbox, { resource: 'proposal', operation: 'getAll', returnAll: true });
		const uids = jsonOf(result).map((record) => (record.proposal as { uid: string }).uid);
		expect(uids).toHaveLength(sandbox.state.proposals.length);
		expect(new Set(uids).size).toBe(uids.length);
		expect(new Set(uids)).toEqual(new Set(sandbox.state.proposals.map((record) => record.proposal.uid)));
		const requests = await takeRequests(sandbox);
		expect(requests).toHaveLength(Math.ceil(sandbox.state.proposals.length / 20));
	});

	it('Limit below one page needs one request; above one page, only the pages it needs', async () => {
		const below = await runAgencyInbox(sandbox, { resource: 'proposal', operation: 'getAll', limit: 5 });
		expect(below.items).toHaveLength(5);
		expect(await takeRequests(sandbox)).toHaveLength(1);
		const above = await runAgencyInbox(sandbox, { resource: 'proposal', operation: 'getAll', limit: 45 });
		expect(above.items).toHaveLength(45);
		expect(await takeRequests(sandbox)).toHaveLength(3);
		const exact = await runAgencyInbox(sandbox, { resource: 'proposal', operation: 'getAll', limit: 40 });
		expect(exact.items).toHaveLength(40);
		expect(await takeRequests(sandbox)).toHaveLength(2);
	});

	it('pairs every record with the input item that asked for it', async () => {
		const result = await runAgencyInbox(
			sandbox,
			{ resource: 'proposal', operation: 'get', proposalId: byId('={{ $json.id }}') },
			{ inputItems: [{ id: 'prop-0003' }, { id: 'prop-0001' }] },
		);
		expect(result.items.map((item) => [(item.json.proposal as { uid: string }).uid, item.pairedItem])).toEqual([
			['prop-0003', { item: 0 }],
			['prop-0001', { item: 1 }],
		]);
	});
});

describe('resource locator lists', () => {
	const trigger = (parameters: Record<string, unknown> = { resource: 'message', operation: 'send' }) =>
		new TriggerWorkflow({
			type: 'agencyInbox',
			nodeType: new AgencyInbox(),
			parameters: parameters as never,
			credentials: { agencyInboxApi: credentialFor(sandbox) },
		});

	/** Every page of a list, as the editor loads them while one scrolls. */
	async function everyItem(method: string, parameters?: Record<string, unknown>, filter?: string) {
		const items = [];
		let token: string | undefined;
		do {
			const page = await trigger(parameters).listSearch(method, filter, token);
			items.push(...page.results);
			token = page.paginationToken;
		} while (token);
		return items;
	}

	it('searches rooms through the service, with paging', async () => {
		const room = sandbox.state.rooms[0];
		const word = String(room.roomName).split(' ')[0];
		const found = await trigger().listSearch('searchRooms', word);
		expect(found.results.map((item) => item.value)).toContain(room.roomId);
		const all = await trigger().listSearch('searchRooms');
		expect(all.results).toHaveLength(20);
		const next = await trigger().listSearch('searchRooms', undefined, String(all.paginationToken));
		expect(next.results[0].value).not.toBe(all.results[0].value);
		expect((await takeRequests(sandbox))[0].query).toEqual({ search: word });
	});

	it('tells rooms apart: one client has several rooms, two clients share a name', async () => {
		const rooms = sandbox.state.rooms;
		expect(new Set(rooms.map((room) => room.roomName)).size).toBeLessThan(rooms.length / 2);
		const items = await everyItem('searchRooms');
		expect(items).toHaveLength(rooms.length);
		expect(new Set(items.map((item) => item.name)).size).toBe(rooms.length);
		const room = rooms[0];
		expect(items.find((item) => item.value === room.roomId)).toEqual({
			name: `${room.roomName} · ${room.topic} · last message ${room.lastStoryAt!.slice(0, 10)} ${room.lastStoryAt!.slice(11, 16)} UTC (${room.roomId})`,
			value: room.roomId,
		});
	});

	it('tells proposals apart by job, freelancer, status and update time, and links to the job', async () => {
		const page = await trigger().listSearch('searchProposals');
		expect(new Set(page.results.map((item) => item.name)).size).toBe(page.results.length);
		const first = sandbox.state.proposals.find((record) => record.proposal.uid === page.results[0].value)!;
		expect(page.results[0]).toEqual({
			name: expect.stringContaining(`${first.job.title} · ${first.freelancer.name} · ${first.proposal.status} · `),
			value: first.proposal.uid,
			url: first.job.url,
		});
		expect(page.results[0].name).toMatch(/ · (updated|created) \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC \(prop-\d{4}\)$/);
		const filtered = await trigger().listSearch('searchProposals', 'prop-0002');
		expect(filtered.results.map((result) => result.value)).toEqual(['prop-0002']);
	});

	it('lists every agency member for Freelancer when no room is chosen', async () => {
		const freelancers = await trigger().listSearch('searchFreelancers', 'haddad');
		expect(freelancers.results).toEqual([{ name: 'Ana Haddad · business_manager (mem-001)', value: 'mem-001' }]);
		const asExpression = await everyItem('searchFreelancers', { resource: 'message', operation: 'send', roomId: byId('={{ $json.roomId }}') });
		expect(asExpression).toHaveLength(sandbox.state.members.length);
	});

	it("offers the chosen room's agency participants as Freelancer, and By ID stays available", async () => {
		const room = sandbox.state.rooms.find((candidate) => candidate.roomUsers.filter((p) => p.role !== 'client').length >= 3)!;
		const agencyIds = sandbox.state.members.map((member) => member.uid);
		const participants = room.roomUsers.map((p) => p.user.id).filter((id) => agencyIds.includes(id));
		for (const roomId of [byId(room.roomId), { __rl: true, mode: 'list', value: room.roomId }]) {
			const items = await everyItem('searchFreelancers', { resource: 'message', operation: 'send', roomId });
			expect(items.map((item) => item.value).sort()).toEqual([...participants].sort());
		}
		const client = room.roomUsers.find((p) => p.role === 'client')!.user.id;
		expect(participants).not.toContain(client);
		// Where the service shows members under marketplace ids, not their uids: the same members.
		await sandboxControl(sandbox.origin, 'POST', 'variants', { authorIds: 'marketplaceUserId' });
		try {
			const items = await everyItem('searchFreelancers', { resource: 'message', operation: 'send', roomId: byId(room.roomId) });
			expect(items.map((item) => item.value).sort()).toEqual([...participants].sort());
		} finally {
			await sandboxControl(sandbox.origin, 'POST', 'variants', { authorIds: 'memberUid' });
		}
		const freelancer = new AgencyInbox().description.properties.find((property) => property.name === 'freelancerUid')!;
		expect(freelancer.modes?.map((mode) => mode.name)).toEqual(['list', 'id']);
	});

	it('sends as any freelancer the room list offers', async () => {
		const room = sandbox.state.rooms[2];
		const items = await everyItem('searchFreelancers', { resource: 'message', operation: 'send', roomId: byId(room.roomId) });
		const sendable = items.filter((item) => !sandbox.state.unauthorizedFreelancers.includes(String(item.value)));
		expect(sendable.length).toBeGreaterThan(1);
		for (const item of sendable) {
			const result = await runAgencyInbox(sandbox, { resource: 'message', operation: 'send', roomId: byId(room.roomId), freelancerUid: byId(String(item.value)), message: 'Hello' });
			expect(jsonOf(result)[0]).toMatchObject({ userId: item.value });
		}
	});
});
