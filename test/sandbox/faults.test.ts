import { startSandbox, type Sandbox } from '../../sandbox';
import { apiClient, control, expectProblem } from './client';

describe('sandbox fault injection', () => {
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

	test('the next `count` matching requests get the status as a problem object, then normal answers', async () => {
		expect((await ctl.post('/faults', { pathPrefix: '/v1/agency/proposals', status: 503, count: 2 })).status).toBe(200);
		expect((await api.get('/v1/agency')).status).toBe(200); // not matching the prefix
		expectProblem(await api.get('/v1/agency/proposals'), 503);
		expectProblem(await api.get('/v1/agency/proposals/prop-0001'), 503);
		expect((await api.get('/v1/agency/proposals')).status).toBe(200);
	});

	test('method filter, and a 429 fault with Retry-After', async () => {
		await ctl.post('/faults', { method: 'POST', pathPrefix: '/v1/master-inbox', status: 429, count: 1, retryAfter: 2 });
		expect((await api.get('/v1/master-inbox/rooms')).status).toBe(200);
		const limited = await api.post('/v1/master-inbox/rooms/room-001/stories', { message: 'hi', freelancerUid: sandbox.state.rooms[0].roomUsers[1].user.id });
		expectProblem(limited, 429);
		expect(limited.headers.get('retry-after')).toBe('2');
		// Without afterProcessing, the request was not processed.
		expect((await ctl.get('/messages')).body.data).toEqual([]);
	});

	test('afterProcessing: the request is processed, then answered with the fault status', async () => {
		await ctl.post('/faults', { method: 'POST', pathPrefix: '/service/v1/master-inbox/rooms/room-001', status: 502, count: 1, afterProcessing: true });
		const res = await api.post('/v1/master-inbox/rooms/room-001/stories', { message: 'once', freelancerUid: sandbox.state.rooms[0].roomUsers[1].user.id });
		expectProblem(res, 502);
		const messages = (await ctl.get('/messages')).body.data;
		expect(messages.map((m: any) => m.message)).toEqual(['once']);
	});

	test('drop: the request is recorded, then the connection closes without an answer', async () => {
		const freelancerUid = sandbox.state.rooms[0].roomUsers[1].user.id;
		await ctl.post('/faults', { kind: 'drop', method: 'POST', pathPrefix: '/v1/master-inbox/rooms/room-001', afterProcessing: true });
		await expect(api.post('/v1/master-inbox/rooms/room-001/stories', { message: 'stored, answer lost', freelancerUid })).rejects.toThrow();
		await ctl.post('/faults', { kind: 'drop', method: 'DELETE', pathPrefix: '/v1/bid-intents' });
		await expect(api.delete('/v1/bid-intents/bid-001')).rejects.toThrow();
		expect((await ctl.get('/messages')).body.data.map((m: any) => m.message)).toEqual(['stored, answer lost']);
		expect((await ctl.get('/bid-intents')).body.data.find((intent: any) => intent.id === 'bid-001').status).toBe('scheduled');
		const seen = (await ctl.get('/requests')).body.data.map((r: any) => `${r.method} ${r.path} ${r.status}`);
		expect(seen).toEqual(['POST /v1/master-inbox/rooms/room-001/stories 0', 'DELETE /v1/bid-intents/bid-001 0']);
	});

	test('hold: the request is processed at once, its real answer comes holdMs later', async () => {
		const freelancerUid = sandbox.state.rooms[0].roomUsers[1].user.id;
		await ctl.post('/faults', { kind: 'hold', method: 'POST', pathPrefix: '/v1/master-inbox/rooms/room-001', holdMs: 800 });
		const startedAt = Date.now();
		const answer = api.post('/v1/master-inbox/rooms/room-001/stories', { message: 'slow answer', freelancerUid });
		await new Promise((resolve) => setTimeout(resolve, 300));
		expect((await ctl.get('/messages')).body.data.map((m: any) => m.message)).toEqual(['slow answer']);
		const res = await answer;
		expect(res.status).toBe(200);
		expect(res.body.data.message).toBe('slow answer');
		expect(Date.now() - startedAt).toBeGreaterThanOrEqual(800);
	});

	test('hold: a release ends the held answers at once, before their holdMs', async () => {
		const freelancerUid = sandbox.state.rooms[0].roomUsers[1].user.id;
		await ctl.post('/faults', { kind: 'hold', method: 'POST', pathPrefix: '/v1/master-inbox/rooms/room-001', holdMs: 600_000 });
		let answered = false;
		const answer = api.post('/v1/master-inbox/rooms/room-001/stories', { message: 'held until released', freelancerUid }).finally(() => (answered = true));
		while ((await ctl.get('/faults')).body.data.length > 0) await new Promise((resolve) => setTimeout(resolve, 20));
		expect(answered).toBe(false);
		expect((await ctl.post('/faults/release', {})).body).toEqual({ released: 1 });
		expect((await answer).status).toBe(200);
		expect((await ctl.post('/faults/release', {})).body).toEqual({ released: 0 });
	});

	test('invalid fault definitions are rejected', async () => {
		expectProblem(await ctl.post('/faults', { status: 500 }), 400, /pathPrefix/);
		expectProblem(await ctl.post('/faults', { pathPrefix: '/v1', status: 'x' }), 400, /status/);
		expectProblem(await ctl.post('/faults', { kind: 'hang', pathPrefix: '/v1' }), 400, /kind/);
		expectProblem(await ctl.post('/faults', { kind: 'hold', pathPrefix: '/v1' }), 400, /holdMs/);
	});
});
