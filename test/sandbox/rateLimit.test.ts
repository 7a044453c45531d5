import { startSandbox, type Sandbox } from '../../sandbox';
import { RollingWindowLimiter } from '../../sandbox/rateLimit';
import { apiClient, control, expectProblem } from './client';

describe('sandbox rate limit over HTTP', () => {
	let sandbox: Sandbox;

	beforeAll(async () => {
		sandbox = await startSandbox({ requestsPerMinute: 3 });
	});
	afterAll(() => sandbox.close());

	test('admits requestsPerMinute per key, then 429 with an integer Retry-After; 401/403/429 do not count', async () => {
		const api = apiClient(sandbox);
		const ctl = control(sandbox);
		// Rejected by auth: not counted against any budget.
		expect((await apiClient(sandbox, null).get('/v1/agency')).status).toBe(401);
		expect((await apiClient(sandbox, 'bad').get('/v1/agency')).status).toBe(403);
		for (let i = 0; i < 3; i++) expect((await api.get('/v1/agency')).status).toBe(200);

		const limited = await api.get('/v1/agency');
		expectProblem(limited, 429);
		const retryAfter = limited.headers.get('retry-after');
		expect(retryAfter).toMatch(/^\d+$/);
		expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
		expect(Number(retryAfter)).toBeLessThanOrEqual(60);
		expect((await api.get('/v1/agency/members')).status).toBe(429);

		// The budget is per key: the second key still has its own.
		expect((await apiClient(sandbox, sandbox.apiKeys[1]).get('/v1/agency')).status).toBe(200);

		const rate = (await ctl.get('/rate')).body;
		expect(rate).toEqual({ requestsPerMinute: 3, maxInAnyWindow: 3, rejected429: 2 });
		const statuses = (await ctl.get('/requests')).body.data.map((r: any) => r.status);
		expect(statuses).toEqual([401, 403, 200, 200, 200, 429, 429, 200]);
	});
});

describe('RollingWindowLimiter (rolling 60 s window)', () => {
	test('admits again once the oldest admission leaves the window; Retry-After counts down to it', () => {
		const limiter = new RollingWindowLimiter(2);
		expect(limiter.admit('k', 0)).toEqual({ admitted: true });
		expect(limiter.admit('k', 10_000)).toEqual({ admitted: true });
		expect(limiter.admit('k', 20_000)).toEqual({ admitted: false, retryAfterSeconds: 40 });
		expect(limiter.admit('k', 59_500)).toEqual({ admitted: false, retryAfterSeconds: 1 });
		// Rejections did not take slots: at 60 s the first admission has left the window.
		expect(limiter.admit('k', 60_000)).toEqual({ admitted: true });
		expect(limiter.admit('k', 60_001)).toEqual({ admitted: false, retryAfterSeconds: 10 });
		expect(limiter.maxInAnyWindow).toBe(2);
		expect(limiter.rejected429).toBe(3);
	});

	test('0 and Infinity mean unlimited', () => {
		for (const limit of [0, Infinity]) {
			const limiter = new RollingWindowLimiter(limit);
			for (let i = 0; i < 500; i++) expect(limiter.admit('k', i).admitted).toBe(true);
			expect(limiter.maxInAnyWindow).toBe(500);
		}
	});
});
