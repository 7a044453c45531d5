import { createHash } from 'node:crypto';
import { ALL_VARIANTS, DEFAULT_VARIANTS, startSandbox, type Sandbox } from '../../sandbox';
import { allPages, apiClient, control, expectProblem } from './client';

describe('sandbox API: auth, lists, Send Message, cancel', () => {
	let sandbox: Sandbox;
	let api: ReturnType<typeof apiClient>;
	let ctl: ReturnType<typeof control>;

	beforeAll(async () => {
		sandbox = await startSandbox({ requestsPerMinute: 0 });
		api = apiClient(sandbox);
		ctl = control(sandbox);
	});
	afterAll(() => sandbox.close());
	beforeEach(() => ctl.post('/reset'));

	describe('authentication', () => {
		test('missing key or non-Bearer scheme is 401', async () => {
			expectProblem(await apiClient(sandbox, null).get('/v1/agency'), 401, /missing/);
			const basic = await fetch(`${sandbox.url}/v1/agency`, { headers: { authorization: 'Basic abc' } });
			expect(basic.status).toBe(401);
		});

		test('unknown key is 403', async () => {
			expectProblem(await apiClient(sandbox, 'wrong-key').get('/v1/agency'), 403, /invalid/);
		});

		test('both keys work; the request log names key ids, never keys', async () => {
			await ctl.delete('/requests');
			expect((await apiClient(sandbox, sandbox.apiKeys[0]).get('/v1/agency')).status).toBe(200);
			expect((await apiClient(sandbox, sandbox.apiKeys[1]).get('/v1/agency', { x: 1 })).status).toBe(200);
			await apiClient(sandbox, 'nope').get('/v1/agency');
			const log = (await ctl.get('/requests')).body.data;
			expect(log.map((r: any) => [r.method, r.path, r.apiKey, r.status])).toEqual([
				['GET', '/v1/agency', 'key-1', 200],
				['GET', '/v1/agency', 'key-2', 200],
				['GET', '/v1/agency', 'unknown', 403],
			]);
			expect(log[1].query).toEqual({ x: '1' });
			expect(JSON.stringify(log)).not.toContain(sandbox.apiKey);
		});
	});

	test('agency profile', async () => {
		const res = await api.get('/v1/agency');
		expect(res.status).toBe(200);
		expect(res.body.data).toEqual({ uid: 'agency-001', name: expect.any(String), description: expect.any(String), timezone: expect.any(String), connectsBalance: expect.any(Number) });
	});

	test('unknown path is a 404 problem', async () => {
		expectProblem(await api.get('/v1/nothing'), 404);
	});

	test('members: both roles, role filter, pagination', async () => {
		const all = (await allPages(api, '/v1/agency/members', { pageSize: 5 })).flatMap((p) => p.body.data);
		expect(all.map((m: any) => m.uid)).toEqual(sandbox.state.members.map((m) => m.uid));
		expect(all[0].uid).toBe('mem-001');
		expect(new Set(all.map((m: any) => m.role))).toEqual(new Set(['member', 'business_manager']));
		const managers = (await allPages(api, '/v1/agency/members', { role: 'business_manager' })).flatMap((p) => p.body.data);
		expect(managers.length).toBeGreaterThan(0);
		expect(managers.every((m: any) => m.role === 'business_manager')).toBe(true);
		expectProblem(await api.get('/v1/agency/members', { role: 'owner' }), 400, /role/);
	});

	test('invitations: three states, status filter, pagination', async () => {
		const all = (await allPages(api, '/v1/agency/invitations', { pageSize: 10 })).flatMap((p) => p.body.data);
		expect(all).toHaveLength(sandbox.state.invitations.length);
		expect(new Set(all.map((i: any) => i.invite.status))).toEqual(new Set(['PENDING', 'ACCEPTED', 'DECLINED']));
		for (const status of ['accepted', 'pending', 'declined']) {
			const filtered = (await allPages(api, '/v1/agency/invitations', { status })).flatMap((p) => p.body.data);
			expect(filtered.length).toBeGreaterThan(0);
			expect(filtered.every((i: any) => i.invite.status === status.toUpperCase())).toBe(true);
		}
		expect(all[0].invite.uid).toMatch(/^inv-\d{3}$/);
		expectProblem(await api.get('/v1/agency/invitations', { status: 'maybe' }), 400, /status/);
	});

	describe('rooms', () => {
		test('default sort date-desc by lastStoryAt, date-asc reverses, all rooms once', async () => {
			const desc = (await allPages(api, '/v1/master-inbox/rooms', { pageSize: 25 })).flatMap((p) => p.body.data);
			const asc = (await allPages(api, '/v1/master-inbox/rooms', { sort: 'date-asc', pageSize: 7 })).flatMap((p) => p.body.data);
			expect(desc).toHaveLength(sandbox.state.rooms.length);
			const descTimes = desc.map((r: any) => r.lastStoryAt);
			expect([...descTimes].sort().reverse()).toEqual(descTimes);
			expect(asc.map((r: any) => r.roomId)).toEqual([...desc.map((r: any) => r.roomId)].reverse());
			expectProblem(await api.get('/v1/master-inbox/rooms', { sort: 'name' }), 400, /sort/);
		});

		test('a rooms cursor is bound to its sort', async () => {
			const page = await api.get('/v1/master-inbox/rooms', { sort: 'date-asc' });
			expectProblem(await api.get('/v1/master-inbox/rooms', { pageCursor: page.body.meta.nextCursor }), 400, /ordering/);
		});

		test('pageSize and search', async () => {
			const page = await api.get('/v1/master-inbox/rooms', { pageSize: 3 });
			expect(page.body.data).toHaveLength(3);
			expect(page.body.meta.pageSize).toBe(3);
			const topic = sandbox.state.rooms[4].topic!;
			const found = (await allPages(api, '/v1/master-inbox/rooms', { search: topic.toUpperCase() })).flatMap((p) => p.body.data);
			expect(found.length).toBeGreaterThan(0);
			expect(found.map((r: any) => r.roomId)).toContain('room-005');
			expect(found.every((r: any) => `${r.roomName} ${r.topic} ${r.lastStory?.message}`.toLowerCase().includes(topic.toLowerCase()))).toBe(true);
		});

		test('participants matches any roomUser by id or name, comma-separated', async () => {
			const byId = (await allPages(api, '/v1/master-inbox/rooms', { participants: 'client-003' })).flatMap((p) => p.body.data);
			// One client has a room per job.
			expect(byId.map((r: any) => r.roomId).sort()).toEqual(['room-003', 'room-027', 'room-051']);
			const clientName = sandbox.state.rooms[6].roomUsers[0].user.name!;
			const byNames = (await allPages(api, '/v1/master-inbox/rooms', { participants: `client-003, ${clientName}` })).flatMap((p) => p.body.data);
			expect(byNames.map((r: any) => r.roomId)).toEqual(expect.arrayContaining(['room-003', 'room-007']));
			const memberRooms = (await allPages(api, '/v1/master-inbox/rooms', { participants: 'mem-002' })).flatMap((p) => p.body.data);
			expect(memberRooms.length).toBeGreaterThan(0);
			expect(memberRooms.every((r: any) => r.roomUsers.some((u: any) => u.user.id === 'mem-002'))).toBe(true);
		});

		test('clientMessageOnly=true keeps rooms whose last story is from a non-member', async () => {
			const memberIds = new Set(sandbox.state.members.map((m) => m.uid));
			const only = (await allPages(api, '/v1/master-inbox/rooms', { clientMessageOnly: 'true' })).flatMap((p) => p.body.data);
			expect(only.length).toBeGreaterThan(0);
			expect(only.length).toBeLessThan(sandbox.state.rooms.length);
			expect(only.every((r: any) => !memberIds.has(r.lastStory.user.id))).toBe(true);
			const all = (await allPages(api, '/v1/master-inbox/rooms', { clientMessageOnly: 'false' })).flatMap((p) => p.body.data);
			expect(all).toHaveLength(sandbox.state.rooms.length);
			expectProblem(await api.get('/v1/master-inbox/rooms', { clientMessageOnly: 'yes' }), 400);
		});
	});

	test('stories: newest first, search, pagination, 404 for unknown room', async () => {
		const roomId = 'room-002';
		const stories = (await allPages(api, `/v1/master-inbox/rooms/${roomId}/stories`, { pageSize: 2 })).flatMap((p) => p.body.data);
		expect(stories).toHaveLength(sandbox.state.stories[roomId].length);
		expect(stories[0].storyId).toBe(sandbox.state.rooms[1].lastStoryId);
		expect(Object.keys(stories[0]).sort()).toEqual(['attachments', 'createdAt', 'message', 'storyId', 'userId', 'userName', 'userPhotoUrl']);
		const word = stories[0].message.split(' ')[0];
		const searched = (await api.get(`/v1/master-inbox/rooms/${roomId}/stories`, { search: word, pageSize: 100 })).body.data;
		expect(searched.length).toBeGreaterThan(0);
		expect(searched.every((s: any) => s.message.toLowerCase().includes(word.toLowerCase()))).toBe(true);
		expectProblem(await api.get('/v1/master-inbox/rooms/room-999/stories'), 404, /room-999/);
	});

	describe('Send Message', () => {
		const path = '/v1/master-inbox/rooms/room-001/stories';
		const sender = () => sandbox.state.rooms[0].roomUsers.find((u) => u.role !== 'client')!.user.id;

		test('stores the story, returns it, and makes it the room lastStory', async () => {
			const res = await api.post(path, { message: 'Hello from the agency', freelancerUid: sender() });
			expect(res.status).toBe(200);
			expect(res.body.data).toEqual({ storyId: expect.stringMatching(/^story-/), userId: sender(), userName: expect.any(String), userPhotoUrl: expect.any(String), message: 'Hello from the agency', createdAt: expect.any(String) });
			const messages = (await ctl.get('/messages')).body.data;
			expect(messages).toEqual([expect.objectContaining({ storyId: res.body.data.storyId, roomId: 'room-001', freelancerUid: sender(), message: 'Hello from the agency' })]);
			const listed = await api.get('/v1/master-inbox/rooms/room-001/stories');
			expect(listed.body.data[0].storyId).toBe(res.body.data.storyId);
			expect(sandbox.state.rooms[0].lastStory?.storyId).toBe(res.body.data.storyId);
		});

		test('400: missing or blank message, missing freelancerUid, freelancer not a participant', async () => {
			expectProblem(await api.post(path, { freelancerUid: sender() }), 400, /message/);
			expectProblem(await api.post(path, { message: '   ', freelancerUid: sender() }), 400, /message/);
			expectProblem(await api.post(path, { message: 'hi' }), 400, /freelancerUid/);
			const outsider = sandbox.state.members.find((m) => !sandbox.state.rooms[0].roomUsers.some((u) => u.user.id === m.uid))!.uid;
			expectProblem(await api.post(path, { message: 'hi', freelancerUid: outsider }), 400, /not a participant/);
			expect((await ctl.get('/messages')).body.data).toEqual([]);
		});

		test('403: no active Master Inbox subscription, or freelancer not authorized', async () => {
			await ctl.post('/changes', { kind: 'masterInbox', active: false });
			expectProblem(await api.post(path, { message: 'hi', freelancerUid: sender() }), 403, /Master Inbox/);
			await ctl.post('/changes', { kind: 'masterInbox', active: true });
			const unauthorized = sandbox.state.unauthorizedFreelancers[0];
			const room = sandbox.state.rooms.find((r) => r.roomUsers.some((u) => u.user.id === unauthorized))!;
			expectProblem(await api.post(`/v1/master-inbox/rooms/${room.roomId}/stories`, { message: 'hi', freelancerUid: unauthorized }), 403, /not authorized/);
			expect((await ctl.get('/messages')).body.data).toEqual([]);
		});

		test('404: unknown room', async () => {
			expectProblem(await api.post('/v1/master-inbox/rooms/room-404/stories', { message: 'hi', freelancerUid: sender() }), 404, /room-404/);
		});

		test('every room has a member who can send', () => {
			const { members, unauthorizedFreelancers, rooms } = sandbox.state;
			const senders = new Set(members.map((m) => m.uid).filter((uid) => !unauthorizedFreelancers.includes(uid)));
			expect(rooms.every((r) => r.roomUsers.some((u) => senders.has(u.user.id)))).toBe(true);
		});
	});

	describe('cancel bid intent', () => {
		test('scheduled -> 200 success and becomes cancelled; a second cancel is 400', async () => {
			const intents = (await ctl.get('/bid-intents')).body.data;
			const scheduled = intents.find((b: any) => b.status === 'scheduled');
			const res = await api.delete(`/v1/bid-intents/${scheduled.id}`);
			expect(res.status).toBe(200);
			expect(res.body).toEqual({ data: { success: true } });
			expect((await ctl.get('/bid-intents')).body.data.find((b: any) => b.id === scheduled.id).status).toBe('cancelled');
			expectProblem(await api.delete(`/v1/bid-intents/${scheduled.id}`), 400, /not a scheduled bid intent/);
		});

		test('submitted or cancelled -> 400; unknown -> 404', async () => {
			const intents = (await ctl.get('/bid-intents')).body.data;
			for (const status of ['submitted', 'cancelled']) {
				const intent = intents.find((b: any) => b.status === status);
				expectProblem(await api.delete(`/v1/bid-intents/${intent.id}`), 400, /not a scheduled bid intent/);
			}
			expectProblem(await api.delete('/v1/bid-intents/bid-999'), 404, /bid-999/);
		});

		test('scheduleBid adds a scheduled intent that can be cancelled', async () => {
			const created = (await ctl.post('/changes', { kind: 'scheduleBid' })).body.data;
			expect(created).toEqual(expect.objectContaining({ id: 'bid-031', status: 'scheduled' }));
			expect((await api.delete('/v1/bid-intents/bid-031')).status).toBe(200);
		});
	});

	describe('variants: readings of what the spec leaves open', () => {
		const ROOMS = '/v1/master-inbox/rooms';
		const INVITATIONS = '/v1/agency/invitations';
		const listed = async (path: string, query: Record<string, string | number> = {}) => (await allPages(api, path, { pageSize: 100, ...query })).flatMap((p) => p.body.data);
		const roomIds = async (query: Record<string, string> = {}) => (await listed(ROOMS, query)).map((r: any) => r.roomId);
		const invitationUids = async (query: Record<string, string> = {}) => (await listed(INVITATIONS, query)).map((i: any) => i.invite.uid);
		const storyIds = async (roomId: string) => (await listed(`${ROOMS}/${roomId}/stories`, { pageSize: 2 })).map((s: any) => s.storyId);
		const change = async (body: object) => (await ctl.post('/changes', body)).body.data;
		const setVariants = async (variants: object) => expect((await ctl.post('/variants', variants)).status).toBe(200);
		/** Room ids by `key` descending, ties by room id descending, as keyset pagination sorts. */
		const byKeyDesc = (key: (roomId: string) => string) =>
			sandbox.state.rooms.map((r) => [key(r.roomId), r.roomId]).sort((a, b) => (a[0] === b[0] ? b[1].localeCompare(a[1]) : a[0] < b[0] ? 1 : -1)).map(([, id]) => id);
		const lastClientMessageAt = (roomId: string) => {
			const memberIds = new Set(sandbox.state.members.map((m) => m.uid));
			return sandbox.state.stories[roomId].filter((s) => !memberIds.has(s.userId)).at(-1)?.createdAt ?? '';
		};
		const lastStoryAt = (roomId: string) => sandbox.state.rooms.find((r) => r.roomId === roomId)!.lastStoryAt ?? '';

		afterEach(() => ctl.post('/variants', DEFAULT_VARIANTS));

		test('GET and POST /_sandbox/variants: defaults, a partial change, 400 on an unknown field or value; reset keeps them', async () => {
			expect((await ctl.get('/variants')).body).toEqual({ data: DEFAULT_VARIANTS });
			expect((await ctl.post('/variants', { roomSort: 'lastClientMessageAt' })).body).toEqual({ data: { ...DEFAULT_VARIANTS, roomSort: 'lastClientMessageAt' } });
			expectProblem(await ctl.post('/variants', { roomSort: 'alphabetical' }), 400, /roomSort must be one of lastStoryAt, lastClientMessageAt/);
			expectProblem(await ctl.post('/variants', { storyOrder: 1 }), 400, /storyOrder/);
			expectProblem(await ctl.post('/variants', { invitationOrder: 'scrambled', colour: 'red' }), 400, /Unknown variant "colour"/);
			await ctl.post('/reset');
			// Neither the rejected requests nor the reset changed them.
			expect((await ctl.get('/variants')).body).toEqual({ data: { ...DEFAULT_VARIANTS, roomSort: 'lastClientMessageAt' } });
		});

		test('startSandbox takes variants and rejects unknown ones', async () => {
			const other = await startSandbox({ requestsPerMinute: 0, variants: { storyOrder: 'oldestFirst' } });
			try {
				expect((await control(other).get('/variants')).body.data).toEqual({ ...DEFAULT_VARIANTS, storyOrder: 'oldestFirst' });
			} finally {
				await other.close();
			}
			await expect(startSandbox({ variants: { invitationOrder: 'random' } as never })).rejects.toThrow(/invitationOrder/);
		});

		test('ALL_VARIANTS starts with the default and holds every value of every field', () => {
			expect(ALL_VARIANTS[0]).toEqual(DEFAULT_VARIANTS);
			const valuesOf = (field: keyof typeof DEFAULT_VARIANTS) => new Set(ALL_VARIANTS.map((v) => v[field]));
			expect(valuesOf('roomSort')).toEqual(new Set(['lastStoryAt', 'lastClientMessageAt', 'createdAt', 'lastSyncedAt']));
			expect(valuesOf('storyOrder')).toEqual(new Set(['newestFirst', 'oldestFirst']));
			expect(valuesOf('invitationOrder')).toEqual(new Set(['createdAtDesc', 'createdAtAsc', 'scrambled']));
			expect(valuesOf('vendorProposalId')).toEqual(new Set(['proposalUid', 'marketplaceId']));
			expect(valuesOf('unnamedQueryParameters')).toEqual(new Set(['honoured', 'ignored', 'rejected']));
			expect(valuesOf('authorIds')).toEqual(new Set(['memberUid', 'marketplaceUserId']));
		});

		// pageSize cuts the pages here; what the service does with it where the spec does not name it is tested in readings.test.ts.
		test.each(ALL_VARIANTS)('every list pages through all its rows once under %j (pageSize honoured)', async (variants) => {
			await setVariants({ ...variants, unnamedQueryParameters: 'honoured' });
			const paged = async (path: string, id: (row: any) => string) => ({
				small: (await allPages(api, path, { pageSize: 7 })).flatMap((p) => p.body.data.map(id)),
				whole: (await api.get(path, { pageSize: 100 })).body.data.map(id),
			});
			for (const [path, id, total] of [
				[ROOMS, (r: any) => r.roomId, sandbox.state.rooms.length],
				[INVITATIONS, (i: any) => i.invite.uid, sandbox.state.invitations.length],
				[`${ROOMS}/room-005/stories`, (s: any) => s.storyId, sandbox.state.stories['room-005'].length],
			] as const) {
				const { small, whole } = await paged(path, id);
				// Sorted by sync time, each sweep starts after a background re-sync: the order changes between sweeps.
				const reorderedBetweenSweeps = path === ROOMS && variants.roomSort === 'lastSyncedAt';
				expect(reorderedBetweenSweeps ? [...small].sort() : small).toEqual(reorderedBetweenSweeps ? [...whole].sort() : whole);
				expect(new Set(small).size).toBe(total);
			}
		});

		test('roomSort lastStoryAt: any message moves its room to the top, an agency one too', async () => {
			const before = await roomIds();
			expect(before).toEqual(byKeyDesc(lastStoryAt));
			const quietest = before[before.length - 1];
			await change({ kind: 'agencyMessage', roomId: quietest });
			expect((await roomIds())[0]).toBe(quietest);
		});

		test('roomSort lastClientMessageAt: by the newest client story; an agency message leaves the room where it is but is its lastStory', async () => {
			await setVariants({ roomSort: 'lastClientMessageAt' });
			const before = await roomIds();
			expect(before).toEqual(byKeyDesc(lastClientMessageAt));
			expect(before).not.toEqual(byKeyDesc(lastStoryAt)); // the seed tells the two readings apart
			expect(await roomIds({ sort: 'date-asc' })).toEqual([...before].reverse());

			const quietest = before[before.length - 1];
			const reply = await change({ kind: 'agencyMessage', roomId: quietest });
			expect(await roomIds()).toEqual(before);
			const room = (await listed(ROOMS)).find((r: any) => r.roomId === quietest);
			expect(room).toMatchObject({ lastStoryId: reply.storyId, lastStoryAt: reply.createdAt, lastStory: { storyId: reply.storyId, user: { id: reply.userId } } });

			await change({ kind: 'clientMessage', roomId: quietest });
			expect((await roomIds())[0]).toBe(quietest);
		});

		test('clientMessageOnly still means "the last story is from a non-member", whatever the sort', async () => {
			await setVariants({ roomSort: 'lastClientMessageAt' });
			const [roomId] = await roomIds({ clientMessageOnly: 'true' });
			await change({ kind: 'agencyMessage', roomId });
			expect(await roomIds({ clientMessageOnly: 'true' })).not.toContain(roomId);
			expect((await roomIds())[0]).toBe(roomId);
		});

		test('storyOrder: newestFirst and oldestFirst', async () => {
			const oldestFirst = sandbox.state.stories['room-002'].map((s) => s.storyId);
			expect(await storyIds('room-002')).toEqual([...oldestFirst].reverse());
			await setVariants({ storyOrder: 'oldestFirst' });
			expect(await storyIds('room-002')).toEqual(oldestFirst);
			const added = await change({ kind: 'clientMessage', roomId: 'room-002' });
			expect((await storyIds('room-002')).at(-1)).toBe(added.storyId);
		});

		test('invitationOrder: createdAt descending, ascending, or scrambled (by a hash of the uid, not by time)', async () => {
			const byCreatedAt = [...sandbox.state.invitations].sort((a, b) => a.invite.createdAt.localeCompare(b.invite.createdAt)).map((i) => i.invite.uid);
			const sha256 = (uid: string) => createHash('sha256').update(uid).digest('hex');
			const byHash = sandbox.state.invitations.map((i) => i.invite.uid).sort((a, b) => sha256(a).localeCompare(sha256(b)));
			expect(await invitationUids()).toEqual([...byCreatedAt].reverse());
			await setVariants({ invitationOrder: 'createdAtAsc' });
			expect(await invitationUids()).toEqual(byCreatedAt);
			await setVariants({ invitationOrder: 'scrambled' });
			const scrambled = await invitationUids();
			expect(scrambled).toEqual(byHash);
			expect(scrambled).not.toEqual(byCreatedAt);
			expect(scrambled).not.toEqual([...byCreatedAt].reverse());
			expect(await invitationUids({ status: 'pending' })).toEqual(scrambled.filter((uid) => sandbox.state.invitations.find((i) => i.invite.uid === uid)!.invite.status === 'PENDING'));
		});

		test('a new invitation is first, last, or somewhere inside, by invitationOrder', async () => {
			const { invite } = await change({ kind: 'newInvitation' });
			expect((await invitationUids())[0]).toBe(invite.uid);
			await setVariants({ invitationOrder: 'createdAtAsc' });
			expect((await invitationUids()).at(-1)).toBe(invite.uid);
			await setVariants({ invitationOrder: 'scrambled' });
			const position = (await invitationUids()).indexOf(invite.uid);
			expect(position).toBeGreaterThan(0);
			expect(position).toBeLessThan(sandbox.state.invitations.length - 1);
		});

		test('a cursor is bound to the variant it was issued under', async () => {
			const cases: Array<[string, object, object]> = [
				[ROOMS, { roomSort: 'lastStoryAt' }, { roomSort: 'lastClientMessageAt' }],
				[ROOMS, { roomSort: 'lastClientMessageAt' }, { roomSort: 'createdAt' }],
				[`${ROOMS}/room-010/stories`, { storyOrder: 'newestFirst' }, { storyOrder: 'oldestFirst' }],
				[INVITATIONS, { invitationOrder: 'createdAtDesc' }, { invitationOrder: 'scrambled' }],
			];
			for (const [path, issuedUnder, usedUnder] of cases) {
				await setVariants(issuedUnder);
				const { nextCursor } = (await api.get(path, { pageSize: 2 })).body.meta;
				expect(nextCursor).toEqual(expect.any(String));
				await setVariants(usedUnder);
				expectProblem(await api.get(path, { pageSize: 2, pageCursor: nextCursor }), 400, /ordering/);
			}
		});
	});

	describe('changes for the message and invitation triggers', () => {
		const change = (body: object) => ctl.post('/changes', body);
		const storyKeys = ['attachments', 'createdAt', 'message', 'storyId', 'userId', 'userName', 'userPhotoUrl'];
		/** Every key path of a JSON value, to compare the shapes of two records. */
		const shape = (value: unknown, path = ''): string[] =>
			value !== null && typeof value === 'object' && !Array.isArray(value) ? Object.entries(value).flatMap(([k, v]) => [`${path}${k}`, ...shape(v, `${path}${k}.`)]) : [];

		test('clientMessage: one message keeps its answer; count 2 adds two stories, each later than the one before', async () => {
			const clientId = sandbox.state.rooms[9].roomUsers[0].user.id;
			const one = (await change({ kind: 'clientMessage', roomId: 'room-010' })).body.data;
			expect(Object.keys(one).sort()).toEqual([...storyKeys, 'roomId'].sort());
			const two = (await change({ kind: 'clientMessage', roomId: 'room-010', count: 2, text: 'Are you there?' })).body.data;
			expect(two).toEqual({
				roomId: 'room-010',
				storyId: two.stories[1].storyId,
				createdAt: two.stories[1].createdAt,
				stories: [1, 2].map(() => expect.objectContaining({ userId: clientId, message: 'Are you there?' })),
			});
			expect(one.createdAt < two.stories[0].createdAt && two.stories[0].createdAt < two.stories[1].createdAt).toBe(true);
			const newest = (await api.get('/v1/master-inbox/rooms/room-010/stories', { pageSize: 3 })).body.data.map((s: any) => s.storyId);
			expect(newest).toEqual([two.stories[1].storyId, two.stories[0].storyId, one.storyId]);
			for (const count of [0, 51, 1.5, '2']) expectProblem(await change({ kind: 'clientMessage', roomId: 'room-010', count }), 400, /count/);
			expect(sandbox.state.stories['room-010'].at(-1)!.storyId).toBe(two.storyId);
		});

		test('clientMessage newRoom: a new client opens a room for a new proposal, with the agency freelancer in it', async () => {
			const seededRoomKeys = Object.keys(sandbox.state.rooms[0]);
			const sent = (await change({ kind: 'clientMessage', newRoom: true, count: 2, text: 'We found you on the marketplace.' })).body.data;
			expect(sent.roomId).toBe('room-061');
			expect(sent.stories).toHaveLength(2);
			const [room] = (await api.get('/v1/master-inbox/rooms', { pageSize: 1 })).body.data;
			expect(Object.keys(room)).toEqual(seededRoomKeys);
			expect(room).toMatchObject({ roomId: 'room-061', lastStoryId: sent.storyId, storiesCount: 2, numUsers: 2, organization: { id: 'org-025' } });
			expect(room.roomUsers.map((u: any) => [u.user.id, u.role])).toEqual([['client-025', 'client'], [room.vendorProposal.userId, 'freelancer']]);
			const proposal = (await api.get(`/v1/agency/proposals/${room.vendorProposal.id}`)).body.data;
			expect(proposal).toMatchObject({ proposal: { uid: 'prop-0301', chatRoomId: 'room-061' }, freelancer: { uid: room.vendorProposal.userId }, job: { uid: room.vendorProposal.marketplaceJobPostingId } });
			const stories = (await api.get('/v1/master-inbox/rooms/room-061/stories')).body.data;
			expect(stories.map((s: any) => [s.userId, s.message])).toEqual([1, 2].map(() => ['client-025', 'We found you on the marketplace.']));

			expectProblem(await change({ kind: 'clientMessage', newRoom: true, roomId: 'room-001' }), 400, /roomId or newRoom/);
			expectProblem(await change({ kind: 'clientMessage', newRoom: 'yes' }), 400, /newRoom/);
			expect(sandbox.state.rooms).toHaveLength(61);
		});

		test('agencyMessage: a member of the room writes; it is the lastStory, and is not a Send Message', async () => {
			const memberId = sandbox.state.rooms[2].roomUsers.find((u) => u.role === 'freelancer')!.user.id;
			const written = (await change({ kind: 'agencyMessage', roomId: 'room-003', freelancerUid: memberId, text: 'On it.' })).body.data;
			expect(written).toEqual({ storyId: expect.stringMatching(/^story-/), userId: memberId, userName: expect.any(String), userPhotoUrl: expect.any(String), message: 'On it.', createdAt: expect.any(String), attachments: [], roomId: 'room-003' });
			expect(sandbox.state.rooms[2].lastStory).toMatchObject({ storyId: written.storyId, user: { id: memberId } });
			expect((await ctl.get('/messages')).body.data).toEqual([]);

			const anywhere = (await change({ kind: 'agencyMessage' })).body.data;
			const room = sandbox.state.rooms.find((r) => r.roomId === anywhere.roomId)!;
			expect(sandbox.state.members.map((m) => m.uid)).toContain(anywhere.userId);
			expect(room.roomUsers.map((u) => u.user.id)).toContain(anywhere.userId);

			const outsider = sandbox.state.members.find((m) => !sandbox.state.rooms[2].roomUsers.some((u) => u.user.id === m.uid))!.uid;
			expectProblem(await change({ kind: 'agencyMessage', roomId: 'room-003', freelancerUid: outsider }), 400, new RegExp(outsider));
			expectProblem(await change({ kind: 'agencyMessage', roomId: 'room-003', freelancerUid: 'client-003' }), 400, /client-003/);
			expectProblem(await change({ kind: 'agencyMessage', roomId: 'room-999' }), 400, /room-999/);
		});

		test('newInvitation: a pending invitation created now, shaped like the seeded ones, numbered after them', async () => {
			const seededPending = sandbox.state.invitations.find((i) => i.invite.status === 'PENDING')!;
			const latestSeeded = sandbox.state.invitations.map((i) => i.invite.createdAt).sort().at(-1)!;
			const created = (await change({ kind: 'newInvitation' })).body.data;
			expect(shape(created)).toEqual(shape(seededPending));
			expect(created.invite).toMatchObject({ uid: 'inv-046', status: 'PENDING', result: seededPending.invite.result });
			expect(created.invite.createdAt > latestSeeded).toBe(true);
			expect((await api.get('/v1/agency/invitations', { status: 'pending', pageSize: 1 })).body.data).toEqual([created]);

			const titled = (await change({ kind: 'newInvitation', title: 'Warehouse dashboard' })).body.data;
			expect(titled).toMatchObject({ invite: { uid: 'inv-047', title: 'Warehouse dashboard' }, job: { title: 'Warehouse dashboard' } });
			expect(titled.invite.createdAt > created.invite.createdAt).toBe(true);
			expectProblem(await change({ kind: 'newInvitation', title: ' ' }), 400, /title/);
		});

		test('invitationStatus: accepted, declined or pending, with the seed\'s result; createdAt unchanged', async () => {
			const uid = sandbox.state.invitations.find((i) => i.invite.status === 'PENDING')!.invite.uid;
			const { createdAt } = sandbox.state.invitations.find((i) => i.invite.uid === uid)!.invite;
			const seededResult = (status: string) => sandbox.state.invitations.find((i) => i.invite.status === status)!.invite.result;
			for (const status of ['accepted', 'declined', 'pending']) {
				const expected = { uid, createdAt, status: status.toUpperCase(), result: seededResult(status.toUpperCase()) };
				expect((await change({ kind: 'invitationStatus', invitationUid: uid, status })).body.data.invite).toMatchObject(expected);
				const listed = (await allPages(api, '/v1/agency/invitations', { status })).flatMap((p) => p.body.data);
				expect(listed.find((i: any) => i.invite.uid === uid)?.invite).toMatchObject(expected);
			}
			expectProblem(await change({ kind: 'invitationStatus', invitationUid: 'inv-999', status: 'accepted' }), 400, /inv-999/);
			expectProblem(await change({ kind: 'invitationStatus', invitationUid: uid, status: 'ACCEPTED' }), 400, /status must be one of/);
			expectProblem(await change({ kind: 'invitationStatus', status: 'accepted' }), 400, /invitationUid/);
		});
	});

	test('reset restores the seed', async () => {
		await ctl.post('/changes', { kind: 'newProposal' });
		await api.post('/v1/master-inbox/rooms/room-001/stories', { message: 'x', freelancerUid: sandbox.state.rooms[0].roomUsers[1].user.id });
		expect(sandbox.state.proposals).toHaveLength(301);
		await ctl.post('/reset');
		expect(sandbox.state.proposals).toHaveLength(300);
		expect((await ctl.get('/messages')).body.data).toEqual([]);
	});

	test('crm stores any JSON', async () => {
		await ctl.post('/crm', { uid: 'prop-0001', stage: 'lead' });
		expect((await ctl.get('/crm')).body.data).toEqual([expect.objectContaining({ uid: 'prop-0001', stage: 'lead' })]);
	});
});
