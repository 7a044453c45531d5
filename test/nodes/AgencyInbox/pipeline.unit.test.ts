import { DateTime } from 'luxon';
import type { IN8nHttpFullResponse, INode, JsonObject } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { guidanceFor, recordNamedByPath, toNodeApiError } from '../../../nodes/shared/errors';
import { toIsoWithOffset } from '../../../nodes/shared/dateTimes';
import { resetProcessMemory } from '../../../nodes/shared/processMemory';
import { budgetKeyFor, RollingWindowBudget } from '../../../nodes/shared/requestBudget';
import { runOrderOf, setRunOrder } from '../../../nodes/shared/runOrder';
import { latestResultEvent, simplifyProposal } from '../../../nodes/shared/simplifyProposal';
import { pathIsRewritten, pipelineTiming, rateLimitWaitMs, requestEnvelope, sendThroughPipeline } from '../../../nodes/shared/transport';

const node = { id: '1', name: 'Agency Inbox', type: 'agencyInbox', typeVersion: 1, position: [0, 0], parameters: {} } as INode;
const context = { getNode: () => node };

describe('RollingWindowBudget', () => {
	const timing = { windowMs: 200, marginMs: 5, busyPollMs: 5 };

	it('admits `limit` requests, then waits until the oldest answer leaves the window', async () => {
		const budget = new RollingWindowBudget(timing);
		const started = Date.now();
		for (let i = 0; i < 3; i++) budget.release(await budget.acquire('k', 3));
		expect(Date.now() - started).toBeLessThan(100);
		expect(budget.waitBeforeNextSlot('k', 3, Date.now())).toBeGreaterThan(100);
		budget.release(await budget.acquire('k', 3));
		expect(Date.now() - started).toBeGreaterThanOrEqual(200);
	});

	it('keeps keys apart and counts unanswered requests as taken', async () => {
		const budget = new RollingWindowBudget(timing);
		await budget.acquire('a', 1);
		expect(budget.waitBeforeNextSlot('a', 1, Date.now())).toBe(timing.busyPollMs);
		expect(budget.waitBeforeNextSlot('b', 1, Date.now())).toBe(0);
	});

	it('hands freed slots to the waiting request of the lowest order first (the oldest delivery\'s run), then by arrival', async () => {
		const budget = new RollingWindowBudget(timing);
		const first = await budget.acquire('k', 1, 50);
		const served: string[] = [];
		const waiting = (
			[
				['run of the delivery accepted third', 30],
				['run of the delivery accepted first', 10],
				['another request of the first', 10],
				['run of the delivery accepted second', 20],
			] as const
		).map(async ([name, order]) => {
			budget.release(await budget.acquire('k', 1, order));
			served.push(name);
		});
		budget.release(first);
		await Promise.all(waiting);
		expect(served).toEqual(['run of the delivery accepted first', 'another request of the first', 'run of the delivery accepted second', 'run of the delivery accepted third']);
	});

	it('while few places are free, leaves one for each older run that was just answered, so the oldest runs finish in the first window', async () => {
		const budget = new RollingWindowBudget({ windowMs: 1_500, marginMs: 0, busyPollMs: 5, followUpMs: 1_000 });
		const granted: string[] = [];
		const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
		// Four runs of two requests each (Get Proposal, then the reply), arriving 5 ms apart, 4 places a window.
		const run = async (order: number) => {
			await pause(order * 5);
			for (const request of ['get', 'reply']) {
				const slot = await budget.acquire('k', 4, order);
				granted.push(`run ${order} ${request}`);
				budget.release(slot);
				await pause(20);
			}
		};
		await Promise.all([1, 2, 3, 4].map(run));
		// Without the places left for follow-ups: every get first, every reply a window later.
		expect(granted.slice(0, 4)).toEqual(['run 1 get', 'run 2 get', 'run 1 reply', 'run 2 reply']);
		expect(granted.slice(4).sort()).toEqual(['run 3 get', 'run 3 reply', 'run 4 get', 'run 4 reply']);
	});

	it('places a run at the time its delivery was accepted, any other run at its first request, a request outside a run nowhere', () => {
		const runOf = (executionId: string) => ({ getExecutionId: () => executionId });
		setRunOrder(runOf('run-of-a-delivery'), 1_000);
		expect(runOrderOf(runOf('run-of-a-delivery'), 5_000)).toBe(1_000);
		expect(runOrderOf(runOf('another-run'), 2_000)).toBe(2_000);
		expect(runOrderOf(runOf('another-run'), 3_000)).toBe(2_000);
		expect(runOrderOf({}, 4_000)).toBeUndefined();
	});

	it('holds every request of a key while paused by a 429', () => {
		const budget = new RollingWindowBudget(timing);
		const now = Date.now();
		budget.pauseUntil('k', now + 1000);
		expect(budget.waitBeforeNextSlot('k', 100, now)).toBe(1000);
		expect(budget.waitBeforeNextSlot('k', 100, now + 1000)).toBe(0);
	});

	it('identifies keys by a SHA-256 hash that never contains the key', () => {
		const key = budgetKeyFor('secret-key', 'http://a/service');
		expect(key).toMatch(/^[0-9a-f]{64}$/);
		expect(key).not.toContain('secret-key');
		expect(budgetKeyFor('secret-key', 'http://b/service')).not.toBe(key);
	});
});

describe('rateLimitWaitMs (Retry-After)', () => {
	it('reads seconds, an HTTP date, or falls back to one window', () => {
		expect(rateLimitWaitMs({ 'retry-after': '3' })).toBe(3000);
		const now = Date.parse('2025-01-01T00:00:00Z');
		expect(rateLimitWaitMs({ 'retry-after': 'Wed, 01 Jan 2025 00:00:05 GMT' }, now)).toBe(5000);
		expect(rateLimitWaitMs({})).toBe(pipelineTiming.windowMs);
	});
});

describe('toIsoWithOffset (Updated Since)', () => {
	it("reads a local time in the workflow's time zone and writes its offset", () => {
		expect(toIsoWithOffset('2025-07-01T10:00:00', 'Europe/Berlin')).toBe('2025-07-01T10:00:00+02:00');
		expect(toIsoWithOffset('2025-01-01T10:00:00', 'Europe/Berlin')).toBe('2025-01-01T10:00:00+01:00');
		expect(toIsoWithOffset('2025-01-01 10:00', 'America/New_York')).toBe('2025-01-01T10:00:00-05:00');
	});

	it('keeps the instant of values that carry a zone', () => {
		expect(toIsoWithOffset('2025-07-01T08:00:00Z', 'Europe/Berlin')).toBe('2025-07-01T10:00:00+02:00');
		const luxon = DateTime.fromISO('2025-07-01T08:00:00', { zone: 'UTC' });
		expect(toIsoWithOffset(luxon, 'UTC')).toBe('2025-07-01T08:00:00Z');
		expect(toIsoWithOffset(new Date('2025-07-01T08:00:00Z'), 'Asia/Tokyo')).toBe('2025-07-01T17:00:00+09:00');
	});

	it('answers undefined for what does not parse', () => {
		expect(toIsoWithOffset('yesterday-ish', 'UTC')).toBeUndefined();
		expect(toIsoWithOffset(42, 'UTC')).toBeUndefined();
	});
});

describe('simplifyProposal', () => {
	it('flattens a record into the CRM row with the latest result event', () => {
		const record = {
			proposal: {
				uid: 'p1',
				status: 'SUBMITTED',
				createdAt: '2025-01-01T00:00:00Z',
				updatedAt: '2025-01-03T00:00:00Z',
				chatRoomId: 'room-1',
				results: [
					{ type: 'CLIENT_REPLIED', timeStamp: '2025-01-03T00:00:00Z' },
					{ type: 'VIEWED_BY_CLIENT', timeStamp: '2025-01-02T00:00:00Z' },
				],
			},
			job: { title: 'T', url: 'https://x', budgetType: 'FIXED', price: 500, minHourlyRate: null, maxHourlyRate: null },
			client: { country: 'FR', totalSpent: 1000 },
			freelancer: { uid: 'mem-1', name: 'Ana' },
		};
		expect(simplifyProposal(record)).toEqual({
			uid: 'p1',
			status: 'SUBMITTED',
			createdAt: '2025-01-01T00:00:00Z',
			updatedAt: '2025-01-03T00:00:00Z',
			jobTitle: 'T',
			jobUrl: 'https://x',
			jobBudgetType: 'FIXED',
			jobFixedPrice: 500,
			jobMinHourlyRate: null,
			jobMaxHourlyRate: null,
			clientCountry: 'FR',
			clientTotalSpent: 1000,
			freelancerUid: 'mem-1',
			freelancerName: 'Ana',
			latestResult: 'CLIENT_REPLIED',
			latestResultAt: '2025-01-03T00:00:00Z',
			chatRoomId: 'room-1',
		});
	});

	it('tolerates missing parts', () => {
		expect(simplifyProposal({})).toMatchObject({ uid: null, jobTitle: null, latestResult: null, chatRoomId: null });
		expect(latestResultEvent(undefined)).toBeNull();
	});
});

describe('toNodeApiError', () => {
	it('carries title, detail, HTTP code and guidance, never the API key', () => {
		const error = toNodeApiError(
			node,
			{ method: 'GET', path: '/v1/agency', statusCode: 403, problem: { title: 'Forbidden', detail: 'Key sk-123 is invalid.' } },
			'sk-123',
		);
		expect(error).toBeInstanceOf(NodeApiError);
		expect(error.httpCode).toBe('403');
		expect(error.message).toBe('Forbidden: Key *** is invalid.');
		expect(error.description).toContain('API Key');
		expect(JSON.stringify(error)).not.toContain('sk-123');
	});

	it('gives guidance per status', () => {
		const at = (statusCode: number, path = '/v1/agency', detail = '', method = 'GET') =>
			guidanceFor({ method, path, statusCode, problem: { detail } });
		expect(at(400, '/v1/agency/proposals', 'pageCursor was issued for another ordering')).toContain('another ordering');
		expect(at(400)).toContain('parameter');
		expect(at(401)).toContain('No API key');
		expect(at(403, '/v1/master-inbox/rooms/r/stories', '', 'POST')).toContain('Master Inbox subscription');
		expect(at(404, '/v1/agency/proposals/prop%2F9')).toContain('No proposal with ID "prop/9"');
		expect(at(404, '/v1/master-inbox/rooms/room-9/stories')).toContain('chat room with ID "room-9"');
		expect(at(429)).toContain('too many requests');
		expect(at(500)).toContain('Try again later');
		expect(at(502, '/v1/master-inbox/rooms/r/stories', '', 'POST')).toContain('not sent again');
		expect(guidanceFor({ method: 'GET', path: '/v1/agency' })).toContain('Base URL');
		expect(recordNamedByPath('/v1/bid-intents/bid-001')).toEqual({ label: 'bid intent', id: 'bid-001' });
	});
});

describe('toNodeApiError: no answer, or an error inside n8n', () => {
	const send = { method: 'POST', path: '/v1/master-inbox/rooms/room-001/stories' };
	const cancel = { method: 'DELETE', path: '/v1/bid-intents/bid-001' };

	it.each(['ECONNRESET', 'ETIMEDOUT', 'ECONNABORTED', 'EPIPE'])('a write cut off by %s: the outcome is unknown, in our words, not n8n\'s', (code) => {
		const sent = toNodeApiError(node, { ...send, networkErrorCode: code, attempts: 1 });
		expect(sent.message).toBe('No answer from the Agency Inbox service: the message may already have been sent. Check the room before sending it again.');
		expect(sent.description).toContain(`(${code})`);
		const cancelled = toNodeApiError(node, { ...cancel, networkErrorCode: code, attempts: 1 });
		expect(cancelled.message).toBe('No answer from the Agency Inbox service: the bid intent may already be cancelled. Check the bid intent before cancelling it again.');
		for (const error of [sent, cancelled]) {
			expect(error.httpCode).toBeNull();
			expect(`${error.message} ${error.description}`).not.toMatch(/retry/i);
		}
	});

	it('a write refused before it left (ECONNREFUSED) changed nothing; a read says how often it tried', () => {
		const refused = toNodeApiError(node, { ...send, networkErrorCode: 'ECONNREFUSED', attempts: 1 });
		expect(refused.message).toBe('Could not reach the Agency Inbox service');
		expect(refused.description).toContain('did not reach the service, so nothing was changed');
		const read = toNodeApiError(node, { method: 'GET', path: '/v1/agency', networkErrorCode: 'ECONNRESET', attempts: 4 });
		expect(read.message).toBe('Could not reach the Agency Inbox service');
		expect(read.description).toContain('(ECONNRESET, tried 4 times)');
	});

	it('an error raised inside n8n keeps its cause, even one that names an error code, and never the key', () => {
		const bridge = toNodeApiError(node, { method: 'GET', path: '/v1/agency/proposals', cause: 'No bridge acquired for this context' });
		expect(bridge.message).toBe('The request to the Agency Inbox service failed in n8n: No bridge acquired for this context');
		expect(bridge.description).toContain('run the node again');
		const withCode = toNodeApiError(node, { method: 'GET', path: '/v1/agency', cause: 'ENOENT: no such file, key sk-9' }, 'sk-9');
		expect(withCode.message).toBe('The request to the Agency Inbox service failed in n8n: ENOENT: no such file, key ***');
		const write = toNodeApiError(node, { ...send, cause: 'No bridge acquired for this context' });
		expect(write.description).toContain('the message may already have been sent: check the room before sending it again');
	});
});

describe('paths n8n would rewrite', () => {
	it('finds "." and ".." segments, plain, percent-encoded or after a backslash', () => {
		for (const path of ['/v1/agency/proposals/..', '/v1/bid-intents/.', '/v1/master-inbox/rooms/../stories', '/v1/x/%2e%2E', '/v1/x/.%2e/y', '/v1/x\\..\\y', '/v1/x/..?a=b']) {
			expect({ path, rewritten: pathIsRewritten(path) }).toEqual({ path, rewritten: true });
		}
		for (const path of ['/v1/agency/proposals/...', '/v1/x/%252e%252e', '/v1/x/..%2Fagency', '/v1/x/%20..%20', '/v1/agency?x=..', '/v1/x#..']) {
			expect({ path, rewritten: pathIsRewritten(path) }).toEqual({ path, rewritten: false });
		}
	});

	it('the pipeline refuses such a path before it asks for credentials or sends anything', async () => {
		const pipelineContext = {
			getNode: () => node,
			getCredentials: jest.fn(),
			helpers: { httpRequestWithAuthentication: jest.fn() },
		};
		await expect(requestEnvelope(pipelineContext, { method: 'DELETE', url: '/v1/bid-intents/..' })).rejects.toBeInstanceOf(NodeOperationError);
		expect(pipelineContext.getCredentials).not.toHaveBeenCalled();
		expect(pipelineContext.helpers.httpRequestWithAuthentication).not.toHaveBeenCalled();
	});
});

describe('sendThroughPipeline', () => {
	const saved = { ...pipelineTiming, retryBackoffMs: [...pipelineTiming.retryBackoffMs] };
	beforeEach(() => {
		resetProcessMemory();
		Object.assign(pipelineTiming, { retryBackoffMs: [5, 5, 5], maxRateLimitWaitMs: 1_000, minRateLimitWaitMs: 10 });
	});
	afterAll(() => Object.assign(pipelineTiming, saved));

	const answer = (statusCode: number, headers = {}): IN8nHttpFullResponse => ({
		statusCode,
		headers,
		body: statusCode < 400 ? { data: {} } : { title: 'T', detail: 'D', status: statusCode },
	});
	function scripted(...responses: Array<IN8nHttpFullResponse | Error>) {
		const send = jest.fn(async () => {
			const next = responses.shift()!;
			if (next instanceof Error) throw next;
			return next;
		});
		return send;
	}
	const request = (method: string) => ({ method, path: '/v1/x', idempotent: method === 'GET', budgetKey: `k-${method}`, limit: 100 });

	it('waits Retry-After on 429 and sends again, even a message', async () => {
		const send = scripted(answer(429, { 'retry-after': '0.05' }), answer(200));
		const started = Date.now();
		await sendThroughPipeline(context, send, request('POST'));
		expect(send).toHaveBeenCalledTimes(2);
		expect(Date.now() - started).toBeGreaterThanOrEqual(45);
	});

	it('fails with 429 once the bounded wait is spent', async () => {
		const send = scripted(...Array.from({ length: 10 }, () => answer(429, { 'retry-after': '0.4' })));
		await expect(sendThroughPipeline(context, send, request('GET'))).rejects.toMatchObject({ httpCode: '429' });
		expect(send).toHaveBeenCalledTimes(3);
	});

	it('retries reads on 5xx and network errors, with a limit', async () => {
		const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
		const send = scripted(answer(503), reset, answer(200));
		expect((await sendThroughPipeline(context, send, request('GET'))).statusCode).toBe(200);
		const failing = scripted(answer(500), answer(500), answer(500), answer(500), answer(200));
		await expect(sendThroughPipeline(context, failing, request('GET'))).rejects.toMatchObject({ httpCode: '500' });
		expect(failing).toHaveBeenCalledTimes(4);
	});

	it('never sends a write again after a 5xx or a network error', async () => {
		const send = scripted(answer(500), answer(200));
		await expect(sendThroughPipeline(context, send, request('POST'))).rejects.toMatchObject({ httpCode: '500' });
		const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
		const dropped = scripted(reset, answer(200));
		await expect(sendThroughPipeline(context, dropped, request('DELETE'))).rejects.toBeInstanceOf(NodeApiError);
		expect(send).toHaveBeenCalledTimes(1);
		expect(dropped).toHaveBeenCalledTimes(1);
	});

	it("reads the network code that n8n 1.x keeps only as a NodeApiError's httpCode", async () => {
		const node = { id: '1', name: 'Agency Inbox', type: 'agencyInbox', typeVersion: 1, position: [0, 0] as [number, number], parameters: {} };
		// What n8n 1.123.81's httpRequestWithAuthentication throws for a dropped connection.
		const wrapped = Object.assign(new Error('The connection to the server was closed unexpectedly'), { httpCode: 'ECONNRESET', cause: {} });
		expect(new NodeApiError(node, Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) as unknown as JsonObject).httpCode).toBe('ECONNRESET');
		const dropped = scripted(wrapped, answer(200));
		await expect(sendThroughPipeline(context, dropped, request('DELETE'))).rejects.toMatchObject({
			message: 'Could not reach the Agency Inbox service',
			description: expect.stringContaining('(ECONNRESET, tried 1 times)'),
		});
		expect(dropped).toHaveBeenCalledTimes(1);
		const droppedRead = scripted(wrapped, answer(200));
		expect((await sendThroughPipeline(context, droppedRead, request('GET'))).statusCode).toBe(200);
	});

	it('does not take an error raised inside n8n (or a Node ERR_ code) for a network error: no retry, cause kept', async () => {
		const bridge = scripted(new Error('No bridge acquired for this context'), answer(200));
		await expect(sendThroughPipeline(context, bridge, request('GET'))).rejects.toMatchObject({
			message: 'The request to the Agency Inbox service failed in n8n: No bridge acquired for this context',
		});
		expect(bridge).toHaveBeenCalledTimes(1);
		const invalidUrl = scripted(Object.assign(new TypeError('Invalid URL'), { code: 'ERR_INVALID_URL' }), answer(200));
		await expect(sendThroughPipeline(context, invalidUrl, request('GET'))).rejects.toMatchObject({ message: expect.stringContaining('Invalid URL') });
		expect(invalidUrl).toHaveBeenCalledTimes(1);
	});
});
