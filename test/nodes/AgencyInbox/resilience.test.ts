/** Rate limit, injected faults, error messages and input checks, through the engine against the sandbox. */
import { resetProcessMemory } from '../../../nodes/shared/processMemory';
import { pipelineTiming } from '../../../nodes/shared/transport';
import {
	byId,
	control,
	credentialFor,
	injectFault,
	rateFigures,
	runAgencyInbox,
	type Sandbox,
	startSandbox,
	takeRequests,
} from './fixtures';

const savedTiming = { ...pipelineTiming, retryBackoffMs: [...pipelineTiming.retryBackoffMs] };
beforeAll(() => Object.assign(pipelineTiming, { retryBackoffMs: [20, 40, 80], maxRateLimitWaitMs: 2_500 }));
afterAll(() => Object.assign(pipelineTiming, savedTiming));
beforeEach(() => resetProcessMemory());

const sendMessage = {
	resource: 'message',
	operation: 'send',
	roomId: byId('room-001'),
	freelancerUid: byId('mem-001'),
	message: 'Hello from n8n',
};

describe('request budget', () => {
	it('ten input items with Return All at 20 per minute: no 429 reaches the user, the window is never exceeded', async () => {
		const sandbox = await startSandbox({ requestsPerMinute: 20, proposals: 20, pageSize: 10 });
		try {
			const inputItems = Array.from({ length: 10 }, (_, index) => ({ index }));
			const result = await runAgencyInbox(
				sandbox,
				{ resource: 'proposal', operation: 'getAll', returnAll: true },
				{ credential: credentialFor(sandbox, { requestsPerMinute: 20 }), inputItems },
			);
			expect(result.error).toBeUndefined();
			expect(result.items).toHaveLength(10 * 20);
			expect(result.items.filter((item) => item.pairedItem && (item.pairedItem as { item: number }).item === 9)).toHaveLength(20);
			expect(await rateFigures(sandbox)).toMatchObject({ maxInAnyWindow: 20, rejected429: 0 });
		} finally {
			await sandbox.close();
		}
	});

	it('ten input items with Return All need three windows of requests: the budget waits, the service never answers 429', async () => {
		// The same minute for both sides, shortened to 1.5 s so the budget must hold requests back.
		const windowMs = 1_500;
		const sandbox = await startSandbox({ requestsPerMinute: 20, rateLimitWindowMs: windowMs, proposals: 50, pageSize: 10 });
		const savedWindowMs = pipelineTiming.windowMs;
		pipelineTiming.windowMs = windowMs;
		try {
			const started = Date.now();
			const result = await runAgencyInbox(
				sandbox,
				{ resource: 'proposal', operation: 'getAll', returnAll: true },
				{ credential: credentialFor(sandbox, { requestsPerMinute: 20 }), inputItems: Array.from({ length: 10 }, (_, index) => ({ index })) },
			);
			expect(result.error).toBeUndefined();
			expect(result.items).toHaveLength(10 * 50);
			// 10 items x 5 pages = 50 requests: at 20 per window, the last ones wait two windows.
			expect(Date.now() - started).toBeGreaterThanOrEqual(2 * windowMs);
			expect(await rateFigures(sandbox)).toMatchObject({ maxInAnyWindow: 20, rejected429: 0 });
		} finally {
			pipelineTiming.windowMs = savedWindowMs;
			await sandbox.close();
		}
	});

	it('spaces requests so no rolling window holds more than Requests per Minute (window shortened to 1 s)', async () => {
		const sandbox = await startSandbox({ requestsPerMinute: 20 });
		const windowMs = pipelineTiming.windowMs;
		pipelineTiming.windowMs = 1_000;
		try {
			const started = Date.now();
			const result = await runAgencyInbox(
				sandbox,
				{ resource: 'agency', operation: 'get' },
				{ credential: credentialFor(sandbox, { requestsPerMinute: 4 }), inputItems: Array.from({ length: 10 }, () => ({})) },
			);
			expect(result.items).toHaveLength(10);
			expect(Date.now() - started).toBeGreaterThanOrEqual(2_000);
			const times = (await takeRequests(sandbox)).map((request) => Date.parse(request.at));
			const mostInOneSecond = Math.max(...times.map((start) => times.filter((t) => t >= start && t < start + 1_000).length));
			expect(mostInOneSecond).toBeLessThanOrEqual(4);
		} finally {
			pipelineTiming.windowMs = windowMs;
			await sandbox.close();
		}
	});
});

describe('recovery', () => {
	let sandbox: Sandbox;
	beforeAll(async () => (sandbox = await startSandbox({ requestsPerMinute: 0 })));
	afterAll(async () => await sandbox.close());
	beforeEach(async () => {
		await control(sandbox, 'POST', 'reset');
		await control(sandbox, 'DELETE', 'faults');
		await takeRequests(sandbox);
	});

	it('waits out injected 429s (Retry-After) and returns every record', async () => {
		await injectFault(sandbox, { pathPrefix: '/v1/agency/proposals', status: 429, count: 2, retryAfter: 1 });
		const result = await runAgencyInbox(sandbox, { resource: 'proposal', operation: 'getAll', limit: 30 });
		expect(result.error).toBeUndefined();
		expect(result.items).toHaveLength(30);
		expect((await takeRequests(sandbox)).map((request) => request.status)).toEqual([429, 429, 200, 200]);
	});

	it('retries reads after 5xx answers', async () => {
		await injectFault(sandbox, { pathPrefix: '/v1/agency/members', status: 503, count: 2 });
		const result = await runAgencyInbox(sandbox, { resource: 'member', operation: 'getAll', returnAll: true });
		expect(result.items).toHaveLength(sandbox.state.members.length);
		expect((await takeRequests(sandbox)).map((request) => request.status)).toEqual([503, 503, 200]);
	});

	it('never sends a message twice when the service fails after storing it', async () => {
		await injectFault(sandbox, { method: 'POST', pathPrefix: '/v1/master-inbox/rooms', status: 500, afterProcessing: true });
		const result = await runAgencyInbox(sandbox, sendMessage);
		expect(result.error?.httpCode).toBe('500');
		expect(result.error?.description).toContain('not sent again');
		const { data: sent } = await control<{ data: unknown[] }>(sandbox, 'GET', 'messages');
		expect(sent).toHaveLength(1);
		expect(await takeRequests(sandbox)).toHaveLength(1);
	});

	it.each([
		['Send Message', sendMessage, 'POST', 'the message may already have been sent. Check the room before sending it again'],
		['Bid Intent → Cancel', { resource: 'bidIntent', operation: 'cancel', bidIntentId: 'bid-001' }, 'DELETE', 'the bid intent may already be cancelled. Check the bid intent before cancelling it again'],
	])('%s: a connection dropped after the request left is not sent again, and the error says the outcome is unknown', async (_, parameters, method, outcome) => {
		await injectFault(sandbox, { kind: 'drop', method, pathPrefix: '/v1', afterProcessing: true });
		const { error } = await runAgencyInbox(sandbox, parameters);
		expect(error?.message).toBe(`No answer from the Agency Inbox service: ${outcome}.`);
		expect(error?.description).toContain('ECONNRESET');
		expect(error?.description).toContain('did not send it again');
		// n8n's generic text for ECONNRESET would invite a retry.
		expect(`${error?.message} ${error?.description}`).not.toMatch(/retry the request immediately/i);
		expect((await takeRequests(sandbox)).map((request) => `${request.method} ${request.status}`)).toEqual([`${method} 0`]);
	});

	it('a write whose connection dropped was processed once: one message stored, one bid cancelled', async () => {
		await injectFault(sandbox, { kind: 'drop', pathPrefix: '/v1', afterProcessing: true, count: 2 });
		await runAgencyInbox(sandbox, sendMessage);
		await runAgencyInbox(sandbox, { resource: 'bidIntent', operation: 'cancel', bidIntentId: 'bid-001' });
		const { data: sent } = await control<{ data: unknown[] }>(sandbox, 'GET', 'messages');
		expect(sent).toHaveLength(1);
		const { data: intents } = await control<{ data: Array<{ id: string; status: string }> }>(sandbox, 'GET', 'bid-intents');
		expect(intents.find((intent) => intent.id === 'bid-001')?.status).toBe('cancelled');
	});

	it('retries a read whose connection dropped', async () => {
		await injectFault(sandbox, { kind: 'drop', pathPrefix: '/v1/agency', count: 2 });
		const { error, items } = await runAgencyInbox(sandbox, { resource: 'agency', operation: 'get' });
		expect(error).toBeUndefined();
		expect(items).toHaveLength(1);
		expect((await takeRequests(sandbox)).map((request) => request.status)).toEqual([0, 0, 200]);
	});

	it('sends a message again after a 429, which proves it was not processed', async () => {
		await injectFault(sandbox, { method: 'POST', pathPrefix: '/v1/master-inbox/rooms', status: 429, retryAfter: 1 });
		const result = await runAgencyInbox(sandbox, sendMessage);
		expect(result.error).toBeUndefined();
		const { data: sent } = await control<{ data: unknown[] }>(sandbox, 'GET', 'messages');
		expect(sent).toHaveLength(1);
	});
});

describe('errors', () => {
	let sandbox: Sandbox;
	beforeAll(async () => (sandbox = await startSandbox({ requestsPerMinute: 0 })));
	afterAll(async () => await sandbox.close());
	beforeEach(async () => {
		await control(sandbox, 'DELETE', 'faults');
		await takeRequests(sandbox);
	});

	it('400: the service detail and guidance (cancel of a bid that is not scheduled)', async () => {
		const { error } = await runAgencyInbox(sandbox, { resource: 'bidIntent', operation: 'cancel', bidIntentId: 'bid-002' });
		expect(error?.httpCode).toBe('400');
		expect(error?.message).toMatch(/not a scheduled bid intent/i);
		expect(error?.description).toContain('parameter');
	});

	it('401: no key reached the service', async () => {
		const { error } = await runAgencyInbox(sandbox, { resource: 'agency', operation: 'get' }, { credential: credentialFor(sandbox, { apiKey: '' }) });
		expect(error?.httpCode).toBe('401');
		expect(error?.description).toContain('No API key');
	});

	it('403: the key is rejected, and never echoed', async () => {
		const wrongKey = 'sk-wrong-key-4711';
		const { error } = await runAgencyInbox(sandbox, { resource: 'agency', operation: 'get' }, { credential: credentialFor(sandbox, { apiKey: wrongKey }) });
		expect(error?.httpCode).toBe('403');
		expect(error?.description).toContain('API Key');
		expect(JSON.stringify({ message: error?.message, description: error?.description, context: error?.context })).not.toContain(wrongKey);
	});

	it('403 on Send Message explains the Master Inbox subscription', async () => {
		await control(sandbox, 'POST', 'changes', { kind: 'masterInbox', active: false });
		try {
			const { error } = await runAgencyInbox(sandbox, sendMessage);
			expect(error?.httpCode).toBe('403');
			expect(error?.description).toContain('Master Inbox subscription');
		} finally {
			await control(sandbox, 'POST', 'changes', { kind: 'masterInbox', active: true });
		}
	});

	it('404 names the ID', async () => {
		const { error } = await runAgencyInbox(sandbox, { resource: 'proposal', operation: 'get', proposalId: byId('prop-9999') });
		expect(error?.httpCode).toBe('404');
		expect(error?.description).toContain('No proposal with ID "prop-9999"');
	});

	it('429 once the bounded wait is spent', async () => {
		await injectFault(sandbox, { pathPrefix: '/v1/agency', status: 429, count: 10, retryAfter: 1 });
		const { error } = await runAgencyInbox(sandbox, { resource: 'agency', operation: 'get' });
		expect(error?.httpCode).toBe('429');
		expect(error?.message).toContain('Injected fault');
		expect(error?.description).toContain('after waiting 2 s');
	});

	it('5xx after the retries of a read', async () => {
		await injectFault(sandbox, { pathPrefix: '/v1/agency', status: 502, count: 10 });
		const { error } = await runAgencyInbox(sandbox, { resource: 'agency', operation: 'get' });
		expect(error?.httpCode).toBe('502');
		expect(error?.description).toContain('sent 4 times');
	});

	it('an error raised inside n8n keeps its cause in the message and is not taken for a network error', async () => {
		const { error } = await runAgencyInbox(sandbox, { resource: 'agency', operation: 'get' }, { credential: credentialFor(sandbox, { baseUrl: 'ftp://127.0.0.1/service' }) });
		expect(error?.message).toBe('The request to the Agency Inbox service failed in n8n: Unsupported protocol ftp:');
		expect(error?.description).toContain('Base URL');
		expect(await takeRequests(sandbox)).toEqual([]);
	});

	it('Continue On Fail: one error item for the failed input, the others still run', async () => {
		const result = await runAgencyInbox(
			sandbox,
			{ resource: 'proposal', operation: 'get', proposalId: byId('={{ $json.id }}') },
			{ continueOnFail: true, inputItems: [{ id: 'prop-0001' }, { id: 'prop-9999' }, { id: 'prop-0002' }] },
		);
		expect(result.error).toBeUndefined();
		expect(result.items).toHaveLength(3);
		expect((result.items[0].json.proposal as { uid: string }).uid).toBe('prop-0001');
		expect(result.items[1].error?.message).toContain('prop-9999');
		expect((result.items[2].json.proposal as { uid: string }).uid).toBe('prop-0002');
	});
});

describe('bad inputs are rejected before any request', () => {
	let sandbox: Sandbox;
	beforeAll(async () => (sandbox = await startSandbox({ requestsPerMinute: 0 })));
	afterAll(async () => await sandbox.close());

	it.each([
		['an empty message', { ...sendMessage, message: '   ' }, 'Message is empty'],
		['a blank room', { ...sendMessage, roomId: byId(' ') }, 'Room is empty'],
		// Literal empty required fields are stopped by n8n itself; expressions reach the node blank.
		['a blank freelancer', { ...sendMessage, freelancerUid: byId('={{ $json.missing }}') }, 'Freelancer is empty'],
		['a blank proposal ID', { resource: 'proposal', operation: 'get', proposalId: byId('={{ "  " }}') }, 'Proposal is empty'],
		['a blank bid intent ID', { resource: 'bidIntent', operation: 'cancel', bidIntentId: '={{ "" }}' }, 'Bid Intent ID is empty'],
		[
			'an unparseable Updated Since',
			{ resource: 'proposal', operation: 'getAll', filters: { updatedSince: '={{ "next tuesday" }}' } },
			'is not a date and time',
		],
	])('%s', async (_, parameters, message) => {
		await takeRequests(sandbox);
		const { error } = await runAgencyInbox(sandbox, parameters);
		expect(error?.message).toContain(message);
		expect(await takeRequests(sandbox)).toEqual([]);
	});

	// Without the check, n8n's HTTP client resolves these: GET /v1/agency/, DELETE /v1/, POST /v1/master-inbox/stories.
	it.each([
		['Proposal → Get, ".." by ID', { resource: 'proposal', operation: 'get', proposalId: byId('..') }, 'Proposal ".." is not an ID'],
		['Proposal → Get, "." from the list', { resource: 'proposal', operation: 'get', proposalId: { __rl: true, mode: 'list', value: '.' } }, 'Proposal "." is not an ID'],
		['Bid Intent → Cancel, ".." mapped by an expression', { resource: 'bidIntent', operation: 'cancel', bidIntentId: '={{ $json.id }}' }, 'Bid Intent ID ".." is not an ID'],
		['Send Message, room ".."', { ...sendMessage, roomId: byId('..') }, 'Room ".." is not an ID'],
		['Message → Get Many, room "." from an expression', { resource: 'message', operation: 'getAll', roomId: byId('={{ $json.id.slice(1) }}'), limit: 5 }, 'Room "." is not an ID'],
		['Message → Get Many, room [".."] (an array, as encodeURIComponent reads it)', { resource: 'message', operation: 'getAll', roomId: byId('={{ [$json.id] }}'), limit: 5 }, 'Room ".." is not an ID'],
	])('%s: refused, the sandbox sees no request', async (_, parameters, message) => {
		await takeRequests(sandbox);
		const { error } = await runAgencyInbox(sandbox, parameters, { inputItems: [{ id: '..' }] });
		expect(error?.message).toBe(`${message}: nothing was sent`);
		expect(error?.description).toContain('another endpoint');
		expect(await takeRequests(sandbox)).toEqual([]);
	});

	it('Continue On Fail: a dot ID fails its own item only', async () => {
		await takeRequests(sandbox);
		const result = await runAgencyInbox(
			sandbox,
			{ resource: 'proposal', operation: 'get', proposalId: byId('={{ $json.id }}') },
			{ continueOnFail: true, inputItems: [{ id: '..' }, { id: 'prop-0001' }, { id: '.' }] },
		);
		expect(result.items.map((item) => item.error?.message ?? (item.json.proposal as { uid: string }).uid)).toEqual([
			'Proposal ".." is not an ID: nothing was sent',
			'prop-0001',
			'Proposal "." is not an ID: nothing was sent',
		]);
		expect((await takeRequests(sandbox)).map((request) => request.path)).toEqual(['/v1/agency/proposals/prop-0001']);
	});

	it('IDs that only look like dots are sent as one segment: "%2e%2e", "...", "../agency", " .. "', async () => {
		await takeRequests(sandbox);
		const ids = ['%2e%2e', '...', '../agency', ' .. '];
		const result = await runAgencyInbox(
			sandbox,
			{ resource: 'proposal', operation: 'get', proposalId: byId('={{ $json.id }}') },
			{ continueOnFail: true, inputItems: ids.map((id) => ({ id })) },
		);
		expect(result.items.map((item) => item.error?.description)).toEqual(ids.map((id) => `No proposal with ID "${id}" exists for this agency. Check the ID, or pick the proposal from the list.`));
		expect((await takeRequests(sandbox)).map((request) => request.path)).toEqual([
			'/v1/agency/proposals/%252e%252e',
			'/v1/agency/proposals/...',
			'/v1/agency/proposals/..%2Fagency',
			'/v1/agency/proposals/%20..%20',
		]);
	});
});
