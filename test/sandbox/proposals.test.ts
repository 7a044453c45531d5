import { startSandbox, type Sandbox } from '../../sandbox';
import { allPages, apiClient, control, expectProblem } from './client';

describe('sandbox proposals list', () => {
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

	const uids = (pages: Array<{ body: any }>) => pages.flatMap((p) => p.body.data.map((r: any) => r.proposal.uid));

	test('seeds several hundred proposals, about 10% with updatedAt null', () => {
		const all = sandbox.state.proposals;
		expect(all).toHaveLength(300);
		const nulls = all.filter((p) => p.proposal.updatedAt === null).length;
		expect(nulls).toBeGreaterThanOrEqual(15);
		expect(nulls).toBeLessThanOrEqual(45);
		expect(all[0].proposal.uid).toBe('prop-0001');
	});

	test('same seed, same data', async () => {
		const other = await startSandbox({ requestsPerMinute: 0 });
		try {
			expect(other.state.proposals).toEqual(sandbox.state.proposals);
			expect(other.signingSecret).toBe(sandbox.signingSecret);
		} finally {
			await other.close();
		}
	});

	test('without updatedSince: createdAt ascending then uid, every proposal exactly once, last page has no nextCursor', async () => {
		const pages = await allPages(api, '/v1/agency/proposals');
		expect(pages).toHaveLength(15);
		const seen = uids(pages);
		expect(seen).toHaveLength(300);
		expect(new Set(seen).size).toBe(300);
		const created = pages.flatMap((p) => p.body.data.map((r: any) => r.proposal.createdAt));
		expect([...created].sort()).toEqual(created);
		for (const page of pages) {
			expect(page.body.meta.total).toBe(300);
			expect(page.body.meta.pageSize).toBe(page.body.data.length);
		}
		const last = pages[pages.length - 1].body;
		expect('nextCursor' in last.meta).toBe(false);
		// Proposals without updatedAt are reachable here.
		expect(pages.flatMap((p) => p.body.data).some((r: any) => r.proposal.updatedAt === null)).toBe(true);
	});

	test('pageSize overrides the default page size', async () => {
		const page = await api.get('/v1/agency/proposals', { pageSize: 7 });
		expect(page.body.data).toHaveLength(7);
		expect(page.body.meta.nextCursor).toEqual(expect.any(String));
		expectProblem(await api.get('/v1/agency/proposals', { pageSize: 'x' }), 400, /pageSize/);
	});

	test('status filter', async () => {
		const pages = await allPages(api, '/v1/agency/proposals', { status: 'archived', pageSize: 50 });
		const rows = pages.flatMap((p) => p.body.data);
		expect(rows.length).toBeGreaterThan(0);
		expect(rows.every((r: any) => r.proposal.status === 'ARCHIVED')).toBe(true);
		expect(pages[0].body.meta.total).toBe(sandbox.state.proposals.filter((p) => p.proposal.status === 'ARCHIVED').length);
		expectProblem(await api.get('/v1/agency/proposals', { status: 'bogus' }), 400, /status/);
	});

	test('with updatedSince: updatedAt descending then uid descending, nulls excluded, all matching rows once', async () => {
		const since = '2026-03-01T00:00:00Z';
		const expected = sandbox.state.proposals
			.filter((p) => p.proposal.updatedAt !== null && p.proposal.updatedAt >= '2026-03-01T00:00:00.000Z')
			.map((p) => p.proposal.uid);
		const pages = await allPages(api, '/v1/agency/proposals', { updatedSince: since, pageSize: 9 });
		const rows = pages.flatMap((p) => p.body.data);
		expect(rows.map((r: any) => r.proposal.uid).sort()).toEqual([...expected].sort());
		expect(rows.every((r: any) => r.proposal.updatedAt !== null)).toBe(true);
		for (let i = 1; i < rows.length; i++) {
			const a = rows[i - 1].proposal;
			const b = rows[i].proposal;
			expect(a.updatedAt > b.updatedAt || (a.updatedAt === b.updatedAt && a.uid > b.uid)).toBe(true);
		}
		expect(pages[0].body.meta.total).toBe(expected.length);
	});

	test('seed contains equal updatedAt values and the uid tie-break keeps them on separate pages without loss', async () => {
		const counts = new Map<string, number>();
		for (const p of sandbox.state.proposals) if (p.proposal.updatedAt) counts.set(p.proposal.updatedAt, (counts.get(p.proposal.updatedAt) ?? 0) + 1);
		expect([...counts.values()].some((c) => c > 1)).toBe(true);
		const pages = await allPages(api, '/v1/agency/proposals', { updatedSince: '2000-01-01T00:00:00Z', pageSize: 1 });
		const seen = uids(pages);
		expect(new Set(seen).size).toBe(seen.length);
		expect(seen).toHaveLength([...counts.values()].reduce((a, b) => a + b, 0));
	});

	test('updatedSince boundary is inclusive, with Z and with a +03:00 offset', async () => {
		const change = await ctl.post('/changes', { kind: 'clientReply', proposalUid: 'prop-0042' });
		const updatedAt: string = change.body.data.proposal.updatedAt;
		const ms = Date.parse(updatedAt);
		const inOffset = (offsetMs: number, suffix: string) => new Date(ms + offsetMs).toISOString().replace('Z', suffix);

		const atZ = await api.get('/v1/agency/proposals', { updatedSince: updatedAt });
		expect(atZ.body.data.map((r: any) => r.proposal.uid)).toEqual(['prop-0042']);
		const atOffset = await api.get('/v1/agency/proposals', { updatedSince: inOffset(3 * 3600_000, '+03:00') });
		expect(atOffset.body.data.map((r: any) => r.proposal.uid)).toEqual(['prop-0042']);
		const justAfter = await api.get('/v1/agency/proposals', { updatedSince: new Date(ms + 1).toISOString() });
		expect(justAfter.body.data).toEqual([]);
		expect('nextCursor' in justAfter.body.meta).toBe(false);
		const justAfterOffset = await api.get('/v1/agency/proposals', { updatedSince: inOffset(3 * 3600_000 + 1, '+03:00') });
		expect(justAfterOffset.body.data).toEqual([]);
	});

	test('a result event moves updatedAt strictly forward (rule 1) and sameTimestampAs shares one', async () => {
		const first = await ctl.post('/changes', { kind: 'viewed', proposalUid: 'prop-0010' });
		const second = await ctl.post('/changes', { kind: 'hire', proposalUid: 'prop-0011' });
		const a = first.body.data.proposal;
		const b = second.body.data.proposal;
		expect(a.results.at(-1)).toEqual({ type: 'VIEWED_BY_CLIENT', timeStamp: a.updatedAt });
		expect(b.results.at(-1).type).toBe('HIRED');
		expect(b.updatedAt > a.updatedAt).toBe(true);
		const tied = await ctl.post('/changes', { kind: 'clientReply', proposalUid: 'prop-0012', sameTimestampAs: 'prop-0011' });
		expect(tied.body.data.proposal.updatedAt).toBe(b.updatedAt);
		const since = await api.get('/v1/agency/proposals', { updatedSince: b.updatedAt });
		expect(since.body.data.map((r: any) => r.proposal.uid)).toEqual(['prop-0012', 'prop-0011']);
	});

	test('a proposal with updatedAt null becomes reachable through updatedSince once changed', async () => {
		const legacy = sandbox.state.proposals.find((p) => p.proposal.updatedAt === null)!.proposal.uid;
		const before = await allPages(api, '/v1/agency/proposals', { updatedSince: '2000-01-01T00:00:00Z', pageSize: 100 });
		expect(uids(before)).not.toContain(legacy);
		await ctl.post('/changes', { kind: 'clientReply', proposalUid: legacy });
		const after = await api.get('/v1/agency/proposals', { updatedSince: '2026-07-01T00:00:00Z' });
		expect(after.body.data[0].proposal.uid).toBe(legacy);
	});

	test('rule 4: a proposal updated mid-sweep moves above the cursor and is skipped for the rest of that sweep', async () => {
		const first = await api.get('/v1/agency/proposals', { updatedSince: '2000-01-01T00:00:00Z', pageSize: 10 });
		const later = sandbox.state.proposals
			.filter((p) => p.proposal.updatedAt !== null)
			.sort((x, y) => (x.proposal.updatedAt! < y.proposal.updatedAt! ? -1 : 1))[0].proposal.uid; // the oldest: on the last page
		await ctl.post('/changes', { kind: 'clientReply', proposalUid: later });
		const rest = await allPages(api, '/v1/agency/proposals', { updatedSince: '2000-01-01T00:00:00Z', pageSize: 10 });
		expect(uids(rest)[0]).toBe(later); // a new sweep sees it first
		let cursor = first.body.meta.nextCursor;
		const sweep = first.body.data.map((r: any) => r.proposal.uid);
		while (cursor) {
			const page = await api.get('/v1/agency/proposals', { updatedSince: '2000-01-01T00:00:00Z', pageSize: 10, pageCursor: cursor });
			sweep.push(...page.body.data.map((r: any) => r.proposal.uid));
			cursor = page.body.meta.nextCursor;
		}
		expect(sweep).not.toContain(later);
		expect(new Set(sweep).size).toBe(sweep.length);
	});

	test('newProposal appears at the end of the createdAt ordering and at the top of the updatedSince ordering', async () => {
		const created = await ctl.post('/changes', { kind: 'newProposal' });
		const uid = created.body.data.proposal.uid;
		expect(uid).toBe('prop-0301');
		expect(created.body.data.proposal.createdAt).toBe(created.body.data.proposal.updatedAt);
		const byCreated = await allPages(api, '/v1/agency/proposals', { pageSize: 100 });
		expect(uids(byCreated).at(-1)).toBe(uid);
		const byUpdated = await api.get('/v1/agency/proposals', { updatedSince: created.body.data.proposal.updatedAt });
		expect(byUpdated.body.data.map((r: any) => r.proposal.uid)).toEqual([uid]);
	});

	test('newProposal in a given room; relinkProposal moves a proposal to another room or to none, as a change', async () => {
		const created = await ctl.post('/changes', { kind: 'newProposal', roomId: 'room-007' });
		expect(created.body.data.proposal.chatRoomId).toBe('room-007');
		const room = (id: string) => sandbox.state.rooms.find((candidate) => candidate.roomId === id)!;
		const freelancer = created.body.data.freelancer.uid;
		expect(room('room-007').roomUsers.some((participant) => participant.user.id === freelancer)).toBe(true);

		const moved = await ctl.post('/changes', { kind: 'relinkProposal', proposalUid: 'prop-0003', roomId: 'room-009' });
		expect(moved.body.data.proposal).toMatchObject({ uid: 'prop-0003', chatRoomId: 'room-009' });
		expect(Date.parse(moved.body.data.proposal.updatedAt)).toBeGreaterThan(Date.parse(created.body.data.proposal.updatedAt));
		expect(room('room-009').roomUsers.some((participant) => participant.user.id === moved.body.data.freelancer.uid)).toBe(true);
		const byUpdated = await api.get('/v1/agency/proposals', { updatedSince: moved.body.data.proposal.updatedAt });
		expect(byUpdated.body.data.map((r: any) => [r.proposal.uid, r.proposal.chatRoomId])).toEqual([['prop-0003', 'room-009']]);

		const unlinked = await ctl.post('/changes', { kind: 'relinkProposal', proposalUid: 'prop-0003', roomId: null });
		expect(unlinked.body.data.proposal.chatRoomId).toBeNull();
		expect((await ctl.post('/changes', { kind: 'relinkProposal', proposalUid: 'prop-0003' })).status).toBe(400);
		expect((await ctl.post('/changes', { kind: 'relinkProposal', proposalUid: 'prop-0003', roomId: 'room-none' })).status).toBe(400);
	});

	test('seeds as many rooms as asked, the proposals spread over them', async () => {
		const many = await startSandbox({ requestsPerMinute: 0, proposals: 500, rooms: 400 });
		try {
			expect(many.state.rooms).toHaveLength(400);
			const rooms = new Set(many.state.proposals.map((record) => record.proposal.chatRoomId));
			expect(rooms.size).toBe(401); // every room, and none for one in four of the proposals past the 400th
			expect(many.state.rooms.every((room) => Date.parse(room.createdAtDateTime) < Date.parse('2026-06-01T00:00:00.000Z'))).toBe(true);
		} finally {
			await many.close();
		}
	});

	test('a cursor used with the other ordering or another status is rejected with 400 naming the ordering', async () => {
		const plain = await api.get('/v1/agency/proposals');
		const withSince = await api.get('/v1/agency/proposals', { updatedSince: '2000-01-01T00:00:00Z' });
		expectProblem(await api.get('/v1/agency/proposals', { updatedSince: '2000-01-01T00:00:00Z', pageCursor: plain.body.meta.nextCursor }), 400, /ordering/);
		expectProblem(await api.get('/v1/agency/proposals', { pageCursor: withSince.body.meta.nextCursor }), 400, /ordering/);
		expectProblem(await api.get('/v1/agency/proposals', { status: 'submitted', pageCursor: plain.body.meta.nextCursor }), 400, /restart pagination/);
		expectProblem(await api.get('/v1/agency/proposals', { pageCursor: 'garbage' }), 400, /pageCursor/);
		// A cursor from another list is not accepted either.
		const rooms = await api.get('/v1/master-inbox/rooms');
		expectProblem(await api.get('/v1/agency/proposals', { pageCursor: rooms.body.meta.nextCursor }), 400);
	});

	test('unparseable updatedSince is a 400', async () => {
		for (const bad of ['yesterday', '2026-13-45T00:00:00Z', '2026-01-01T00:00:00']) {
			expectProblem(await api.get('/v1/agency/proposals', { updatedSince: bad }), 400, /updatedSince/);
		}
	});

	test('single proposal: found and 404 naming the id', async () => {
		const found = await api.get('/v1/agency/proposals/prop-0007');
		expect(found.status).toBe(200);
		expect(Object.keys(found.body.data).sort()).toEqual(['client', 'freelancer', 'invitation', 'job', 'jobSearch', 'manager', 'proposal']);
		expect(found.body.data.proposal.uid).toBe('prop-0007');
		expectProblem(await api.get('/v1/agency/proposals/prop-9999'), 404, /prop-9999/);
	});
});
