/**
 * The readings of the spec's open points added for issue 27 (sorting rooms by creation, marketplace-side
 * ids, unnamed query parameters) and issue 33 (sorting rooms by sync time, with a background sync;
 * messages synced late), each alone on top of the default, through real HTTP.
 */
import { DEFAULT_VARIANTS, marketplaceUserIdOf, SINGLE_READINGS, startSandbox, type SandboxVariants } from '../../sandbox';
import { allPages, apiClient, expectProblem, sandboxForSuite } from './client';

const ROOMS = '/v1/master-inbox/rooms';
const PROPOSALS = '/v1/agency/proposals';
const MEMBERS = '/v1/agency/members';
const INVITATIONS = '/v1/agency/invitations';
const STORIES = `${ROOMS}/room-002/stories`; // 10 stories
/** The four lists for which the spec names no page-size parameter. */
const LISTS_WITHOUT_PAGE_SIZE = [MEMBERS, INVITATIONS, PROPOSALS, STORIES];

describe('sandbox readings of what the spec leaves open', () => {
	const suite = sandboxForSuite();

	const setVariants = async (variants: Partial<SandboxVariants>) => expect((await suite.ctl.post('/variants', variants)).status).toBe(200);
	const change = async (body: object) => (await suite.ctl.post('/changes', body)).body.data;
	const rooms = async (query: Record<string, string> = {}) => (await allPages(suite.api, ROOMS, { pageSize: 100, ...query })).flatMap((p) => p.body.data);
	const roomIds = async (query: Record<string, string> = {}) => (await rooms(query)).map((r: any) => r.roomId);
	const storiesOf = async (roomId: string) => (await allPages(suite.api, `${ROOMS}/${roomId}/stories`)).flatMap((p) => p.body.data);
	const memberUids = () => new Set(suite.sandbox.state.members.map((m) => m.uid));

	afterEach(() => suite.ctl.post('/variants', DEFAULT_VARIANTS));

	test('SINGLE_READINGS: the default, then each other value of each field alone on top of it', () => {
		expect(SINGLE_READINGS[0]).toEqual({ label: 'default', variants: DEFAULT_VARIANTS });
		const others = SINGLE_READINGS.slice(1);
		expect(others.map((r) => r.label)).toEqual([
			'roomSort=lastClientMessageAt',
			'roomSort=createdAt',
			'roomSort=lastSyncedAt',
			'storyOrder=oldestFirst',
			'invitationOrder=createdAtAsc',
			'invitationOrder=scrambled',
			'vendorProposalId=marketplaceId',
			'unnamedQueryParameters=ignored',
			'unnamedQueryParameters=rejected',
			'authorIds=marketplaceUserId',
			'roomRowTimes=seconds',
			'roomCreation=together',
			'listCursors=offsets',
		]);
		for (const { label, variants } of others) {
			const [field, value] = label.split('=');
			expect(variants).toEqual({ ...DEFAULT_VARIANTS, [field]: value });
		}
	});

	test('the variants control endpoint takes and reports the new fields; bad values are a 400', async () => {
		const readings = { vendorProposalId: 'marketplaceId', unnamedQueryParameters: 'rejected', authorIds: 'marketplaceUserId', roomSort: 'createdAt' } as const;
		expect((await suite.ctl.post('/variants', readings)).body).toEqual({ data: { ...DEFAULT_VARIANTS, ...readings } });
		expect((await suite.ctl.get('/variants')).body).toEqual({ data: { ...DEFAULT_VARIANTS, ...readings } });
		expectProblem(await suite.ctl.post('/variants', { unnamedQueryParameters: 'strict' }), 400, /unnamedQueryParameters must be one of honoured, ignored, rejected/);
		expectProblem(await suite.ctl.post('/variants', { authorIds: 'memberuid' }), 400, /authorIds/);
		expectProblem(await suite.ctl.post('/variants', { vendorProposalId: null }), 400, /vendorProposalId/);
		await expect(startSandbox({ variants: { roomSort: 'created' } as never })).rejects.toThrow(/roomSort must be one of lastStoryAt, lastClientMessageAt, createdAt, lastSyncedAt/);
	});

	describe('roomSort=createdAt', () => {
		/** Room ids by creation time descending, ties by room id descending, as keyset pagination sorts. */
		const byCreationDesc = () =>
			[...suite.sandbox.state.rooms]
				.sort((a, b) => (a.createdAtDateTime === b.createdAtDateTime ? b.roomId.localeCompare(a.roomId) : a.createdAtDateTime < b.createdAtDateTime ? 1 : -1))
				.map((r) => r.roomId);

		test('rooms by creation time, sort giving the direction; a message moves no room, a new room comes first', async () => {
			const byLastStory = await roomIds();
			await setVariants({ roomSort: 'createdAt' });
			const before = await roomIds();
			expect(before).toEqual(byCreationDesc());
			expect(before).not.toEqual(byLastStory); // the seed tells the two readings apart
			expect(await roomIds({ sort: 'date-asc' })).toEqual([...before].reverse());

			const oldest = before.at(-1)!;
			const sent = await change({ kind: 'clientMessage', roomId: oldest, text: 'Still there?' });
			await change({ kind: 'agencyMessage', roomId: before.at(-2)! });
			const after = await rooms();
			expect(after.map((r: any) => r.roomId)).toEqual(before);
			expect(after.at(-1)).toMatchObject({ roomId: oldest, lastStoryId: sent.storyId, lastStory: { message: 'Still there?' } });

			const opened = await change({ kind: 'clientMessage', newRoom: true });
			expect(await roomIds()).toEqual([opened.roomId, ...before]);
		});
	});

	describe('lastSyncedAt: set when a room gets a message, moved by re-syncs without one', () => {
		const stateRoom = (roomId: string) => suite.sandbox.state.rooms.find((room) => room.roomId === roomId)!;
		const storiesBefore = (roomId: string) => (suite.sandbox.state.stories[roomId] ?? []).length;

		test('never before the room\'s last message; a message sets it to when the service stored it', async () => {
			for (const room of await rooms()) expect(room.lastSyncedAt >= (room.lastStoryAt ?? room.createdAtDateTime)).toBe(true);
			const sent = await change({ kind: 'clientMessage', roomId: 'room-004' });
			expect(stateRoom('room-004').lastSyncedAt).toBe(sent.createdAt);
		});

		test('roomResync: the rooms named, or the ones synced longest ago, re-synced at one moment with nothing new in them', async () => {
			const before = structuredClone(stateRoom('room-009'));
			const named = await change({ kind: 'roomResync', roomIds: ['room-009', 'room-010'] });
			expect(named.roomIds).toEqual(['room-009', 'room-010']);
			expect(stateRoom('room-009')).toEqual({ ...before, lastSyncedAt: named.lastSyncedAt });
			expect(stateRoom('room-010').lastSyncedAt).toBe(named.lastSyncedAt);
			const stalest = [...suite.sandbox.state.rooms].sort((a, b) => a.lastSyncedAt!.localeCompare(b.lastSyncedAt!)).slice(0, 3).map((room) => room.roomId);
			expect((await change({ kind: 'roomResync', count: 3 })).roomIds).toEqual(stalest);
			expectProblem(await suite.ctl.post('/changes', { kind: 'roomResync', roomIds: 'room-001' }), 400, /roomIds/);
		});

		test('lateClientMessage: written lateByMs ago (or at createdAt), synced now; the lastStory only where no newer message is in the room', async () => {
			const quiet = (await roomIds()).at(-1)!;
			const seeded = storiesBefore(quiet);
			const late = await change({ kind: 'lateClientMessage', roomId: quiet, lateByMs: 60_000, text: 'Sent a minute ago' });
			const room = stateRoom(quiet);
			expect(Date.parse(room.lastSyncedAt!) - Date.parse(late.createdAt)).toBeGreaterThanOrEqual(60_000);
			expect(room).toMatchObject({ lastStoryId: late.storyId, lastStoryAt: late.createdAt });
			// Behind a newer message of the room: among the older ones, not the lastStory.
			const newer = await change({ kind: 'clientMessage', roomId: quiet });
			const behind = await change({ kind: 'lateClientMessage', roomId: quiet, lateByMs: 30_000 });
			expect(stateRoom(quiet)).toMatchObject({ lastStoryId: newer.storyId, storiesCount: seeded + 3 });
			expect((await storiesOf(quiet)).map((story: any) => story.storyId).slice(0, 3)).toEqual([newer.storyId, behind.storyId, late.storyId]);
			const at = new Date(Date.parse(newer.createdAt) - 5).toISOString();
			expect(await change({ kind: 'lateClientMessage', roomId: quiet, createdAt: at })).toMatchObject({ createdAt: at });
			expectProblem(await suite.ctl.post('/changes', { kind: 'lateClientMessage', lateByMs: -1 }), 400, /lateByMs/);
			expectProblem(await suite.ctl.post('/changes', { kind: 'lateClientMessage', createdAt: 'yesterday' }), 400, /createdAt/);
		});

		test('lateClientMessage beforeLastByMs: a late sync behind the room\'s last message (a reply already read): the row\'s last message and time stay, its storiesCount and lastSyncedAt move', async () => {
			const roomId = (await roomIds())[0];
			const reply = await change({ kind: 'agencyMessage', roomId, text: 'Here is the estimate.' });
			const before = structuredClone(stateRoom(roomId));
			const late = await change({ kind: 'lateClientMessage', roomId, beforeLastByMs: 14_000 });
			expect(Date.parse(reply.createdAt) - Date.parse(late.createdAt)).toBe(14_000);
			const row = (await rooms()).find((room: any) => room.roomId === roomId);
			expect(row).toMatchObject({ lastStoryId: reply.storyId, lastStoryAt: reply.createdAt, storiesCount: before.storiesCount! + 1 });
			expect(Date.parse(row.lastSyncedAt)).toBeGreaterThan(Date.parse(before.lastSyncedAt!));
			expect((await storiesOf(roomId)).map((story: any) => story.storyId).slice(0, 2)).toEqual([reply.storyId, late.storyId]);
			const daysLate = await change({ kind: 'lateClientMessage', roomId, beforeLastByMs: 3 * 24 * 60 * 60_000 });
			expect(Date.parse(reply.createdAt) - Date.parse(daysLate.createdAt)).toBe(3 * 24 * 60 * 60_000);
			expectProblem(await suite.ctl.post('/changes', { kind: 'lateClientMessage', roomId, beforeLastByMs: 0 }), 400, /beforeLastByMs/);
			expectProblem(await suite.ctl.post('/changes', { kind: 'lateClientMessage', roomId, beforeLastByMs: 5, createdAt: reply.createdAt }), 400, /not both/);
		});

		test('roomSort=lastSyncedAt: by sync time; each sweep from the top starts after a background sync re-synced a page of the rooms synced longest ago', async () => {
			await setVariants({ roomSort: 'lastSyncedAt' });
			const stalest = [...suite.sandbox.state.rooms].sort((a, b) => a.lastSyncedAt!.localeCompare(b.lastSyncedAt!) || a.roomId.localeCompare(b.roomId)).slice(0, 5);
			const first = await suite.api.get(ROOMS, { pageSize: 5 });
			expect(first.body.data.map((room: any) => room.roomId).sort()).toEqual(stalest.map((room) => room.roomId).sort());
			expect(new Set(first.body.data.map((room: any) => room.lastSyncedAt)).size).toBe(1);
			// The next page is not a new sweep: no re-sync.
			const syncTimes = suite.sandbox.state.rooms.map((room) => room.lastSyncedAt);
			const second = await suite.api.get(ROOMS, { pageSize: 5, pageCursor: first.body.meta.nextCursor });
			expect(suite.sandbox.state.rooms.map((room) => room.lastSyncedAt)).toEqual(syncTimes);
			const listed = [...first.body.data, ...second.body.data].map((room: any) => room.lastSyncedAt);
			expect(listed).toEqual([...listed].sort().reverse());
		});
	});

	describe('vendorProposalId=marketplaceId', () => {
		const linkedRooms = async () => (await rooms()).filter((r: any) => r.vendorProposal !== null);

		test('the default: vendorProposal.id is the uid of a proposal in that room, userId its freelancer', async () => {
			const linked = await linkedRooms();
			expect(linked.length).toBeGreaterThan(10);
			for (const room of linked.slice(0, 5)) {
				const proposal = await suite.api.get(`${PROPOSALS}/${room.vendorProposal.id}`);
				expect(proposal.status).toBe(200);
				expect(proposal.body.data).toMatchObject({ proposal: { chatRoomId: room.roomId }, freelancer: { uid: room.vendorProposal.userId } });
			}
		});

		test('marketplace-side ids that resolve to no proposal; proposal.chatRoomId still links proposals to their rooms', async () => {
			const byDefault = await linkedRooms();
			await setVariants({ vendorProposalId: 'marketplaceId' });
			const linked = await linkedRooms();
			expect(linked.map((r: any) => r.roomId)).toEqual(byDefault.map((r: any) => r.roomId));
			const proposals = (await allPages(suite.api, PROPOSALS, { pageSize: 100 })).flatMap((p) => p.body.data);
			const proposalUids = new Set(proposals.map((p: any) => p.proposal.uid));
			const jobUidsByRoom = new Map<string, string[]>();
			for (const p of proposals) if (p.proposal.chatRoomId !== null) jobUidsByRoom.set(p.proposal.chatRoomId, [...(jobUidsByRoom.get(p.proposal.chatRoomId) ?? []), p.job.uid]);

			for (const [i, room] of linked.entries()) {
				const { id, userId, marketplaceJobPostingId } = room.vendorProposal;
				expect(Object.keys(room.vendorProposal)).toEqual(['id', 'userId', 'marketplaceJobPostingId']);
				expect(id).toMatch(/^~01[0-9a-f]{18}$/);
				expect(proposalUids.has(id)).toBe(false);
				expect(userId).toMatch(/^usr-[0-9a-f]{10}$/);
				expect(memberUids().has(userId)).toBe(false);
				expect(marketplaceJobPostingId).toBe(byDefault[i].vendorProposal.marketplaceJobPostingId);
				// The relation the spec states: the room's proposals name it in chatRoomId.
				expect(jobUidsByRoom.get(room.roomId)).toContain(marketplaceJobPostingId);
				expectProblem(await suite.api.get(`${PROPOSALS}/${encodeURIComponent(id)}`), 404);
			}
			expect(new Set(linked.map((r: any) => r.vendorProposal.id)).size).toBe(linked.length);
			// Stable: the same ids on the next read, and switching back shows the uids again.
			expect((await linkedRooms()).map((r: any) => r.vendorProposal)).toEqual(linked.map((r: any) => r.vendorProposal));
			await setVariants({ vendorProposalId: 'proposalUid' });
			expect((await linkedRooms()).map((r: any) => r.vendorProposal)).toEqual(byDefault.map((r: any) => r.vendorProposal));
		});
	});

	describe('unnamedQueryParameters', () => {
		test('honoured (the default): pageSize cuts a page of every list', async () => {
			for (const path of [...LISTS_WITHOUT_PAGE_SIZE, ROOMS]) {
				const page = await suite.api.get(path, { pageSize: 2 });
				expect(page.status).toBe(200);
				expect(page.body.data).toHaveLength(2);
				expect(page.body.meta.nextCursor).toEqual(expect.any(String));
			}
		});

		test('rejected: pageSize on members, invitations, proposals and stories is a 400 naming it, recorded with its status', async () => {
			await setVariants({ unnamedQueryParameters: 'rejected' });
			await suite.ctl.delete('/requests');
			/** Named parameters with values that would be a 400 of their own. */
			const badNamed: Record<string, Record<string, string>> = {
				[MEMBERS]: { role: 'owner', pageCursor: 'not-a-cursor' },
				[INVITATIONS]: { status: 'maybe' },
				[PROPOSALS]: { updatedSince: 'yesterday' },
				[STORIES]: { pageCursor: 'not-a-cursor' },
			};
			for (const path of LISTS_WITHOUT_PAGE_SIZE) {
				expectProblem(await suite.api.get(path, { pageSize: 5 }), 400, /^Unknown query parameter "pageSize"/);
				// Before anything else: the answer names pageSize, not the bad values of named parameters.
				expectProblem(await suite.api.get(path, { ...badNamed[path], pageSize: 5 }), 400, /^Unknown query parameter "pageSize"/);
			}
			const log = (await suite.ctl.get('/requests')).body.data;
			expect(log.map((r: any) => [r.path, r.query.pageSize, r.status])).toEqual(LISTS_WITHOUT_PAGE_SIZE.flatMap((path) => [[path, '5', 400], [path, '5', 400]]));
			expectProblem(await suite.api.get('/v1/master-inbox/rooms/room-999/stories', { pageSize: 5 }), 400, /"pageSize"/);
			expectProblem(await suite.api.get(ROOMS, { limit: 3 }), 400, /Unknown query parameter "limit"/);
			expectProblem(await suite.api.get('/v1/agency', { verbose: 'true' }), 400, /"verbose".*takes no query parameters/);
			expect((await suite.ctl.get('/messages')).body.data).toEqual([]);
		});

		test('rejected: every parameter the spec names is still accepted', async () => {
			await setVariants({ unnamedQueryParameters: 'rejected' });
			const managers = await suite.api.get(MEMBERS, { role: 'business_manager' });
			expect(managers.status).toBe(200);
			expect(managers.body.data.every((m: any) => m.role === 'business_manager')).toBe(true);
			const pending = await suite.api.get(INVITATIONS, { status: 'pending' });
			expect(pending.status).toBe(200);
			expect(pending.body.data.every((i: any) => i.invite.status === 'PENDING')).toBe(true);
			const updated = await suite.api.get(PROPOSALS, { status: 'submitted', updatedSince: '2026-01-01T00:00:00Z' });
			expect(updated.status).toBe(200);
			expect(updated.body.data.length).toBeGreaterThan(0);
			const roomPage = await suite.api.get(ROOMS, { pageSize: 3, sort: 'date-asc', clientMessageOnly: 'false', search: '', participants: '' });
			expect(roomPage.status).toBe(200);
			expect(roomPage.body.data).toHaveLength(3);
			const word = suite.sandbox.state.stories['room-002'][0].message.split(' ')[0];
			const searched = await suite.api.get(STORIES, { search: word });
			expect(searched.status).toBe(200);
			expect(searched.body.data.length).toBeGreaterThan(0);
			expect(searched.body.data.every((s: any) => s.message.toLowerCase().includes(word.toLowerCase()))).toBe(true);
		});

		test('rejected: pageCursor is accepted on every list', async () => {
			// Pages of 4, so that every list, stories too, spans several pages without pageSize.
			const small = await startSandbox({ requestsPerMinute: 0, pageSize: 4, variants: { unnamedQueryParameters: 'rejected' } });
			try {
				const smallApi = apiClient(small);
				for (const [path, count] of [
					[MEMBERS, small.state.members.length],
					[INVITATIONS, small.state.invitations.length],
					[PROPOSALS, small.state.proposals.length],
					[ROOMS, small.state.rooms.length],
					[STORIES, small.state.stories['room-002'].length],
				] as const) {
					const pages = await allPages(smallApi, path);
					expect(pages.length).toBeGreaterThan(1);
					expect(new Set(pages.flatMap((p) => p.body.data).map((row: any) => JSON.stringify(row))).size).toBe(count);
				}
			} finally {
				await small.close();
			}
		});

		test('ignored: pageSize on members, invitations, proposals and stories has no effect (the default page size); rooms still honour it', async () => {
			await setVariants({ unnamedQueryParameters: 'ignored' });
			const sizes = async (pageSize: number) => Promise.all(LISTS_WITHOUT_PAGE_SIZE.map(async (path) => (await suite.api.get(path, { pageSize })).body.data.length));
			const defaultSizes = [suite.sandbox.state.members.length, 20, 20, suite.sandbox.state.stories['room-002'].length];
			expect(defaultSizes[3]).toBeGreaterThan(2);
			expect(await sizes(2)).toEqual(defaultSizes);
			expect(await sizes(100)).toEqual(defaultSizes);
			expect((await suite.api.get(ROOMS, { pageSize: 3 })).body.data).toHaveLength(3);
			// A parameter the spec names still works.
			expect((await suite.api.get(MEMBERS, { role: 'business_manager', pageSize: 1 })).body.data.every((m: any) => m.role === 'business_manager')).toBe(true);
		});

		test('ignored: the default page size is the one the sandbox was started with', async () => {
			const small = await startSandbox({ requestsPerMinute: 0, pageSize: 4, variants: { unnamedQueryParameters: 'ignored' } });
			try {
				const smallApi = apiClient(small);
				for (const path of LISTS_WITHOUT_PAGE_SIZE) {
					const page = await smallApi.get(path, { pageSize: 50 });
					expect([path, page.body.data.length]).toEqual([path, 4]);
					expect(page.body.meta.nextCursor).toEqual(expect.any(String));
				}
				expect((await smallApi.get(ROOMS, { pageSize: 6 })).body.data).toHaveLength(6);
			} finally {
				await small.close();
			}
		});
	});

	describe('authorIds=marketplaceUserId', () => {
		const memberByMarketplaceId = () => new Map(suite.sandbox.state.members.map((m) => [marketplaceUserIdOf(m.uid), m]));

		test('members appear under a marketplace user id in rooms and stories; the members list, proposals and invitations keep uids', async () => {
			await setVariants({ authorIds: 'marketplaceUserId' });
			const byMarketplaceId = memberByMarketplaceId();
			const listed = await rooms();
			let memberAsCreatorOrOwner = 0;
			let lastByMember = 0;
			for (const room of listed) {
				const stored = suite.sandbox.state.rooms.find((r) => r.roomId === room.roomId)!;
				const shown = room.roomUsers.map((p: any) => p.user.id);
				expect(shown.some((id: string) => memberUids().has(id))).toBe(false);
				// The same people, in the same order: each member under its own marketplace id, with its name; clients as they are.
				expect(room.roomUsers.map((p: any) => [byMarketplaceId.get(p.user.id)?.uid ?? p.user.id, p.user.name])).toEqual(stored.roomUsers.map((p) => [p.user.id, p.user.name]));
				for (const key of ['creator', 'owner', 'blockedBy'] as const) {
					const storedId = stored[key]?.user.id;
					if (storedId !== undefined && memberUids().has(storedId)) {
						memberAsCreatorOrOwner += 1;
						expect(byMarketplaceId.get(room[key].user.id)?.uid).toBe(storedId);
					} else expect(room[key]).toEqual(stored[key]);
				}
				if (stored.lastStory?.user && memberUids().has(stored.lastStory.user.id)) {
					lastByMember += 1;
					expect(byMarketplaceId.get(room.lastStory.user.id)).toMatchObject({ uid: stored.lastStory.user.id, name: room.lastStory.user.name });
				}
			}
			expect(memberAsCreatorOrOwner).toBeGreaterThan(0);
			expect(lastByMember).toBeGreaterThan(0);

			const stories = await storiesOf('room-001');
			const storedStories = suite.sandbox.state.stories['room-001'];
			expect(storedStories.some((s) => memberUids().has(s.userId))).toBe(true);
			for (const story of stories) {
				const stored = storedStories.find((s) => s.storyId === story.storyId)!;
				const member = byMarketplaceId.get(story.userId);
				if (memberUids().has(stored.userId)) expect(member).toMatchObject({ uid: stored.userId, name: story.userName });
				else expect(story.userId).toBe(stored.userId);
			}

			expect((await allPages(suite.api, MEMBERS)).flatMap((p) => p.body.data).map((m: any) => m.uid)).toEqual(suite.sandbox.state.members.map((m) => m.uid));
			const proposal = (await suite.api.get(PROPOSALS, { pageSize: 1 })).body.data[0];
			expect(memberUids().has(proposal.freelancer.uid) && memberUids().has(proposal.manager.uid)).toBe(true);
			const invitation = (await suite.api.get(INVITATIONS, { pageSize: 1 })).body.data[0];
			expect(memberUids().has(invitation.freelancer.uid)).toBe(true);
		});

		test('Send Message takes the member uid and answers with the marketplace id; a 403 for the unauthorized member still', async () => {
			await setVariants({ authorIds: 'marketplaceUserId' });
			const stored = suite.sandbox.state.rooms[0];
			const member = suite.sandbox.state.members.find((m) => stored.roomUsers.some((p) => p.user.id === m.uid) && !suite.sandbox.state.unauthorizedFreelancers.includes(m.uid))!;
			const marketplaceId = marketplaceUserIdOf(member.uid);
			const path = `${ROOMS}/${stored.roomId}/stories`;

			const sent = await suite.api.post(path, { message: 'Sent as a member', freelancerUid: member.uid });
			expect(sent.status).toBe(200);
			expect(sent.body.data).toMatchObject({ userId: marketplaceId, userName: member.name, message: 'Sent as a member' });
			expect((await storiesOf(stored.roomId))[0]).toMatchObject({ storyId: sent.body.data.storyId, userId: marketplaceId, userName: member.name });
			expect((await rooms()).find((r: any) => r.roomId === stored.roomId)).toMatchObject({ lastStoryId: sent.body.data.storyId, lastStory: { user: { id: marketplaceId, name: member.name } } });
			expect((await suite.ctl.get('/messages')).body.data).toEqual([expect.objectContaining({ storyId: sent.body.data.storyId, userId: marketplaceId, freelancerUid: member.uid })]);

			// The marketplace id is not a member uid: Send does not take it.
			expectProblem(await suite.api.post(path, { message: 'x', freelancerUid: marketplaceId }), 400, /not a participant/);
			const unauthorized = suite.sandbox.state.unauthorizedFreelancers[0];
			const itsRoom = suite.sandbox.state.rooms.find((r) => r.roomUsers.some((p) => p.user.id === unauthorized))!;
			expectProblem(await suite.api.post(`${ROOMS}/${itsRoom.roomId}/stories`, { message: 'x', freelancerUid: unauthorized }), 403, /not authorized/);
			expect((await suite.ctl.get('/messages')).body.data).toHaveLength(1);
		});

		test('an agency message, the participants filter and clientMessageOnly follow the shown ids; switching back shows uids again', async () => {
			await setVariants({ authorIds: 'marketplaceUserId' });
			const stored = suite.sandbox.state.rooms[3];
			const member = suite.sandbox.state.members.find((m) => stored.roomUsers.some((p) => p.user.id === m.uid))!;
			const marketplaceId = marketplaceUserIdOf(member.uid);
			const written = await change({ kind: 'agencyMessage', roomId: stored.roomId, freelancerUid: member.uid, text: 'From the agency' });
			expect(written).toMatchObject({ userId: marketplaceId, userName: member.name, roomId: stored.roomId });
			expect(await roomIds({ clientMessageOnly: 'true' })).not.toContain(stored.roomId);

			const withMember = await roomIds({ participants: marketplaceId });
			expect(withMember).toContain(stored.roomId);
			expect(withMember.sort()).toEqual(suite.sandbox.state.rooms.filter((r) => r.roomUsers.some((p) => p.user.id === member.uid)).map((r) => r.roomId).sort());

			await setVariants({ authorIds: 'memberUid' });
			expect((await storiesOf(stored.roomId))[0]).toMatchObject({ storyId: written.storyId, userId: member.uid });
			expect((await rooms()).find((r: any) => r.roomId === stored.roomId).lastStory.user.id).toBe(member.uid);
		});
	});

	describe('roomRowTimes and roomCreation', () => {
		const WHOLE_SECOND = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
		const toWholeSecond = (iso: string) => `${iso.slice(0, 19)}Z`;
		const stored = (roomId: string) => suite.sandbox.state.rooms.find((room) => room.roomId === roomId)!;

		test('seconds: every time of a row cut to its second, the list sorted by the cut times (ties by room id); stories keep milliseconds', async () => {
			const [first, second] = suite.sandbox.state.rooms.slice(20, 22).map((room) => room.roomId);
			await change({ kind: 'clientMessage', roomId: first });
			const newest = await change({ kind: 'clientMessage', roomId: second });
			await setVariants({ roomRowTimes: 'seconds' });
			const listed = await rooms();
			for (const row of listed) {
				const room = stored(row.roomId);
				expect(row).toMatchObject({
					lastStoryAt: toWholeSecond(room.lastStoryAt!),
					lastSyncedAt: toWholeSecond(room.lastSyncedAt!),
					createdAtDateTime: toWholeSecond(room.createdAtDateTime),
					lastStory: { createdDateTime: toWholeSecond(room.lastStory!.createdDateTime!) },
				});
				expect(row.lastStoryAt).toMatch(WHOLE_SECOND);
			}
			const sortKey = (row: any) => `${row.lastStoryAt}|${row.roomId}`;
			expect(listed.map(sortKey)).toEqual(listed.map(sortKey).sort().reverse());
			expect((await storiesOf(second))[0]).toMatchObject({ storyId: newest.storyId, createdAt: newest.createdAt });
			expect(newest.createdAt).not.toMatch(WHOLE_SECOND);
		});

		test('together: every room shows one creation time, so under roomSort=createdAt the list is in order of the room ids', async () => {
			await setVariants({ roomCreation: 'together', roomSort: 'createdAt' });
			const listed = await rooms();
			expect(new Set(listed.map((row: any) => row.createdAtDateTime)).size).toBe(1);
			expect(listed.map((row: any) => row.roomId)).toEqual(suite.sandbox.state.rooms.map((room) => room.roomId).sort().reverse());
			expect(stored(listed[0].roomId).createdAtDateTime).not.toBe(listed[0].createdAtDateTime); // the data keeps its own
		});
	});

	describe('listCursors', () => {
		const page = async (query: Record<string, string>) => (await suite.api.get(ROOMS, { sort: 'date-asc', pageSize: '5', ...query })).body;
		const ids = (body: any) => body.data.map((room: any) => room.roomId);

		test('offsets: a room that moves behind the cursor shifts the rows after it, so the next page skips one; keys: it does not', async () => {
			for (const listCursors of ['keys', 'offsets'] as const) {
				await suite.ctl.post('/reset');
				await setVariants({ listCursors });
				const first = await page({});
				const [, , , , unread] = (await page({ pageSize: '6' })).data.map((room: any) => room.roomId).slice(1);
				// A message in the first page's first room moves it to the list's end (date ascending).
				await change({ kind: 'clientMessage', roomId: ids(first)[0] });
				const second = await page({ pageCursor: first.meta.nextCursor });
				if (listCursors === 'offsets') expect(ids(second)).not.toContain(unread);
				else expect(ids(second)[0]).toBe(unread);
			}
		});

		test('offsets: a cursor of one kind is refused under the other (400), and the proposals keep keys', async () => {
			await setVariants({ listCursors: 'offsets' });
			const counted = await page({});
			const proposals = await suite.api.get(PROPOSALS, { updatedSince: '2000-01-01T00:00:00Z' });
			const next = await suite.api.get(PROPOSALS, { updatedSince: '2000-01-01T00:00:00Z', pageCursor: proposals.body.meta.nextCursor });
			expect(next.status).toBe(200);
			await setVariants({ listCursors: 'keys' });
			expectProblem(await suite.api.get(ROOMS, { sort: 'date-asc', pageSize: '5', pageCursor: counted.meta.nextCursor }), 400, /not a valid cursor/);
		});
	});

	test('under the default readings rooms and stories are served as stored', async () => {
		const listed = await rooms();
		expect(listed).toEqual([...suite.sandbox.state.rooms].sort((a, b) => ((b.lastStoryAt ?? '') === (a.lastStoryAt ?? '') ? b.roomId.localeCompare(a.roomId) : (b.lastStoryAt ?? '').localeCompare(a.lastStoryAt ?? ''))));
		expect(await storiesOf('room-001')).toEqual([...suite.sandbox.state.stories['room-001']].reverse());
	});
});
