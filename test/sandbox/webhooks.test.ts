import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { DEFAULT_VARIANTS, startSandbox, type Sandbox } from '../../sandbox';
import { RETRY_DELAYS_SECONDS } from '../../sandbox/webhooks';
import { apiClient, control, expectProblem } from './client';
import { waitFor } from '../helpers/waitFor';

interface Received {
	body: string;
	headers: IncomingHttpHeaders;
	at: number;
}

/** A webhook receiver answering with `statusFor(received so far, body)`. */
async function startReceiver(statusFor: (index: number, body: string) => number = () => 200) {
	const received: Received[] = [];
	const server: Server = createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (c: Buffer) => chunks.push(c));
		req.on('end', () => {
			const body = Buffer.concat(chunks).toString('utf8');
			const status = statusFor(received.length, body);
			received.push({ body, headers: req.headers, at: Date.now() });
			res.writeHead(status).end();
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
	return { url, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const headerRecord = (headers: IncomingHttpHeaders) => ({
	'webhook-id': String(headers['webhook-id']),
	'webhook-timestamp': String(headers['webhook-timestamp']),
	'webhook-signature': String(headers['webhook-signature']),
});

describe('sandbox webhook sender', () => {
	let sandbox: Sandbox;
	let ctl: ReturnType<typeof control>;

	beforeAll(async () => {
		sandbox = await startSandbox({ requestsPerMinute: 0, webhookTimeScale: 0.001 });
		ctl = control(sandbox);
	});
	afterAll(() => sandbox.close());

	test('signs with Standard Webhooks: standardwebhooks verifies the raw body with the sandbox secret', async () => {
		const receiver = await startReceiver();
		try {
			const endpoint = (await ctl.post('/webhook-endpoints', { url: receiver.url })).body;
			expect(endpoint).toEqual({ id: expect.stringMatching(/^ep-/), url: receiver.url, secret: sandbox.signingSecret });
			const { messageId } = (await ctl.post('/events', { type: 'proposal.accepted', endpointId: endpoint.id })).body;
			const [delivery] = await waitFor(() => receiver.received.length === 1 && receiver.received);
			expect(delivery.headers['webhook-id']).toBe(messageId);
			expect(delivery.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
			expect(delivery.headers['content-type']).toBe('application/json');
			const verified = new Webhook(sandbox.signingSecret).verify(delivery.body, headerRecord(delivery.headers)) as any;
			expect(verified.type).toBe('proposal.accepted');
			expect(Date.parse(verified.timestamp)).not.toBeNaN();
			expect(Object.keys(verified.data).sort()).toEqual(['chat', 'freelancer', 'job', 'manager', 'proposal']);
			expect(verified.data.proposal).toEqual({ uid: expect.any(String), coverLetter: expect.any(String), status: expect.any(String), createdAt: expect.any(String) });
			// A re-serialised or tampered body fails, and so does another secret.
			expect(() => new Webhook(sandbox.signingSecret).verify(delivery.body.replace('"type"', '"type" '), headerRecord(delivery.headers))).toThrow();
			expect(() => new Webhook('whsec_' + Buffer.from('another secret').toString('base64')).verify(delivery.body, headerRecord(delivery.headers))).toThrow();
		} finally {
			await receiver.close();
		}
	});

	test('an endpoint with its own secret; changes fire chat.message.sent and bid_intent.scheduled', async () => {
		const receiver = await startReceiver();
		try {
			const secret = 'whsec_' + Buffer.from('endpoint-specific-secret-123').toString('base64');
			await ctl.post('/webhook-endpoints', { url: receiver.url, secret });
			await ctl.post('/changes', { kind: 'clientMessage', roomId: 'room-004', text: 'Any news?' });
			await ctl.post('/changes', { kind: 'scheduleBid' });
			const received = await waitFor(() => receiver.received.length >= 2 && receiver.received);
			const events = received.map((r) => new Webhook(secret).verify(r.body, headerRecord(r.headers)) as any);
			const chat = events.find((e) => e.type === 'chat.message.sent');
			const bid = events.find((e) => e.type === 'bid_intent.scheduled');
			expect(chat.data).toEqual({ proposal: { uid: expect.stringMatching(/^prop-/) }, message: { text: 'Any news?' }, chat: { id: 'room-004' } });
			expect(bid.data).toEqual({ jobUid: expect.any(String), bidId: expect.stringMatching(/^bid-/) });
		} finally {
			await receiver.close();
		}
	});

	test('count 2 fires chat.message.sent once a message, a new room names its new proposal, an agency message fires nothing', async () => {
		const receiver = await startReceiver();
		try {
			await ctl.post('/webhook-endpoints', { url: receiver.url });
			await ctl.post('/changes', { kind: 'agencyMessage', roomId: 'room-004', text: 'Agency side' });
			await ctl.post('/changes', { kind: 'clientMessage', roomId: 'room-004', count: 2, text: 'Twice' });
			const opened = (await ctl.post('/changes', { kind: 'clientMessage', newRoom: true, text: 'New here' })).body.data;
			const received = await waitFor(() => receiver.received.length >= 3 && receiver.received);
			await new Promise((r) => setTimeout(r, 200)); // time for a stray delivery to arrive
			const events = receiver.received.map((r) => new Webhook(sandbox.signingSecret).verify(r.body, headerRecord(r.headers)) as any);
			expect(received).toHaveLength(3);
			expect(events.map((e) => [e.type, e.data.chat.id, e.data.message.text]).sort()).toEqual([
				['chat.message.sent', 'room-004', 'Twice'],
				['chat.message.sent', 'room-004', 'Twice'],
				['chat.message.sent', opened.roomId, 'New here'],
			]);
			const newRoom = sandbox.state.rooms.find((r) => r.roomId === opened.roomId)!;
			expect(events[2].data.proposal.uid).toBe(newRoom.vendorProposal!.id);
			expect(sandbox.state.proposals.find((p) => p.proposal.uid === newRoom.vendorProposal!.id)?.proposal.chatRoomId).toBe(opened.roomId);
		} finally {
			await receiver.close();
		}
	});

	test('payloads keep proposal and member uids under the marketplace-side id readings', async () => {
		const receiver = await startReceiver();
		try {
			await ctl.post('/variants', { vendorProposalId: 'marketplaceId', authorIds: 'marketplaceUserId' });
			await ctl.post('/webhook-endpoints', { url: receiver.url });
			await ctl.post('/changes', { kind: 'clientMessage', roomId: 'room-004', text: 'Under other ids' });
			await ctl.post('/events', { type: 'proposal.accepted' });
			const received = await waitFor(() => receiver.received.length >= 2 && receiver.received);
			const events = received.map((r) => new Webhook(sandbox.signingSecret).verify(r.body, headerRecord(r.headers)) as any);
			const chat = events.find((e) => e.type === 'chat.message.sent').data;
			const proposal = await apiClient(sandbox).get(`/v1/agency/proposals/${chat.proposal.uid}`);
			expect(proposal.status).toBe(200);
			expect(proposal.body.data.proposal.chatRoomId).toBe('room-004');
			const accepted = events.find((e) => e.type === 'proposal.accepted').data;
			const memberUids = sandbox.state.members.map((m) => m.uid);
			expect(memberUids).toContain(accepted.freelancer.uid);
			expect(memberUids).toContain(accepted.manager.uid);
		} finally {
			await ctl.post('/variants', DEFAULT_VARIANTS);
			await receiver.close();
		}
	});

	test('control endpoint validation', async () => {
		expectProblem(await ctl.post('/webhook-endpoints', {}), 400, /url/);
		expectProblem(await ctl.post('/events', {}), 400, /type/);
		expectProblem(await ctl.post('/events', { type: 'chat.message.sent', endpointId: 'ep-999' }), 400, /ep-999/);
	});
});

describe('webhook retry schedule', () => {
	test('500 three times, then 200: attempts follow 5 s, 5 min, 30 min (x timeScale) with the same id', async () => {
		const timeScale = 0.001;
		const sandbox = await startSandbox({ requestsPerMinute: 0, webhookTimeScale: timeScale });
		const receiver = await startReceiver((index) => (index < 3 ? 500 : 200));
		try {
			const ctl = control(sandbox);
			const endpoint = (await ctl.post('/webhook-endpoints', { url: receiver.url })).body;
			const { messageId } = (await ctl.post('/events', { type: 'chat.message.sent' })).body;
			await waitFor(() => receiver.received.length === 4);
			const deliveries = await waitFor(async () => {
				const data = await deliveriesOf(sandbox);
				return data.length === 4 && data;
			});
			expect(deliveries.map((d: any) => [d.messageId, d.endpointId, d.type, d.attempt, d.status])).toEqual([
				[messageId, endpoint.id, 'chat.message.sent', 1, 500],
				[messageId, endpoint.id, 'chat.message.sent', 2, 500],
				[messageId, endpoint.id, 'chat.message.sent', 3, 500],
				[messageId, endpoint.id, 'chat.message.sent', 4, 200],
			]);
			const times = receiver.received.map((r) => r.at);
			for (let i = 1; i < times.length; i++) {
				const expectedMs = RETRY_DELAYS_SECONDS[i - 1] * 1000 * timeScale;
				expect(times[i] - times[i - 1]).toBeGreaterThanOrEqual(expectedMs - 2);
				// Far below the unscaled schedule (5 s and more): a busy machine delays timers, it does not scale them.
				expect(times[i] - times[i - 1]).toBeLessThan(expectedMs + 4_000);
			}
			// Every attempt carries the same id and a valid signature.
			for (const r of receiver.received) {
				expect(r.headers['webhook-id']).toBe(messageId);
				expect(() => new Webhook(sandbox.signingSecret).verify(r.body, headerRecord(r.headers))).not.toThrow();
			}
			// No exhausted event after a success.
			await new Promise((r) => setTimeout(r, 50));
			expect(receiver.received).toHaveLength(4);
		} finally {
			await sandbox.close();
			await receiver.close();
		}
	});

	test('after 7 failed attempts, message.attempt.exhausted is sent; an unreachable endpoint is retried too', async () => {
		const timeScale = 0.00001; // whole schedule: about 0.63 s
		const sandbox = await startSandbox({ requestsPerMinute: 0, webhookTimeScale: timeScale });
		const receiver = await startReceiver((_, body) => (body.includes('"message.attempt.exhausted"') ? 200 : 500));
		try {
			const ctl = control(sandbox);
			const endpoint = (await ctl.post('/webhook-endpoints', { url: receiver.url })).body;
			const unreachable = (await ctl.post('/webhook-endpoints', { url: 'http://127.0.0.1:9/closed' })).body;
			const { messageId } = (await ctl.post('/events', { type: 'bid_intent.scheduled', endpointId: endpoint.id })).body;
			const exhausted = await waitFor(() => receiver.received.find((r) => r.body.includes('message.attempt.exhausted')));
			const originals = receiver.received.filter((r) => r.headers['webhook-id'] === messageId);
			expect(originals).toHaveLength(1 + RETRY_DELAYS_SECONDS.length);
			const event = new Webhook(sandbox.signingSecret).verify(exhausted.body, headerRecord(exhausted.headers)) as any;
			expect(event.type).toBe('message.attempt.exhausted');
			expect(event.data).toEqual(expect.objectContaining({ msgId: messageId, eventType: 'bid_intent.scheduled', endpointId: endpoint.id, attempts: 7 }));
			const deliveries = (await ctl.get('/deliveries')).body.data;
			expect(deliveries.filter((d: any) => d.messageId === messageId).map((d: any) => d.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7]);

			await ctl.post('/events', { type: 'chat.message.sent', endpointId: unreachable.id });
			const toUnreachable = async () => (await deliveriesOf(sandbox)).filter((d) => d.endpointId === unreachable.id);
			// 7 attempts of the event, then 7 of its exhausted notice, which failed too but does not produce another one.
			const failed = await waitFor(async () => {
				const list = await toUnreachable();
				return list.length === 14 && list;
			});
			expect(failed[0]).toEqual(expect.objectContaining({ attempt: 1, type: 'chat.message.sent', error: expect.any(String) }));
			expect(failed[0].status).toBeUndefined();
			expect(failed.map((d) => d.type)).toEqual([...Array(7).fill('chat.message.sent'), ...Array(7).fill('message.attempt.exhausted')]);
			await new Promise((r) => setTimeout(r, 200));
			expect(await toUnreachable()).toHaveLength(14);
		} finally {
			await sandbox.close();
			await receiver.close();
		}
	});

	test('counts an attempt not answered within the answer timeout as failed and retries it (the 15 s default is assumed: the spec names none)', async () => {
		const sandbox = await startSandbox({ requestsPerMinute: 0, webhookTimeScale: 0.001, webhookAnswerTimeoutMs: 300 });
		let answerFirstLate: (() => void) | undefined;
		const server: Server = createServer((req, res) => {
			req.resume();
			if (!answerFirstLate) answerFirstLate = () => res.writeHead(200).end();
			else res.writeHead(200).end();
		});
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		try {
			const ctl = control(sandbox);
			await ctl.post('/webhook-endpoints', { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` });
			const { messageId } = (await ctl.post('/events', { type: 'chat.message.sent' })).body;
			const attempts = await waitFor(async () => {
				const found = (await deliveriesOf(sandbox)).filter((delivery) => delivery.messageId === messageId);
				return found.length === 2 && found;
			});
			expect(attempts.map(({ attempt, status, error }) => ({ attempt, status, error }))).toEqual([
				{ attempt: 1, status: undefined, error: 'no answer within 300 ms' },
				{ attempt: 2, status: 200, error: undefined },
			]);
		} finally {
			answerFirstLate?.();
			await sandbox.close();
			server.closeAllConnections();
			await new Promise((resolve) => server.close(resolve));
		}
	});

	test('POST /_sandbox/webhook-settings sets the answer timeout of the attempts that follow; a bad value is refused', async () => {
		const sandbox = await startSandbox({ requestsPerMinute: 0, webhookTimeScale: 0.001 });
		const held: Array<() => void> = [];
		const server: Server = createServer((req, res) => {
			req.resume();
			held.push(() => res.writeHead(200).end());
		});
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		try {
			const ctl = control(sandbox);
			expect((await ctl.get('/webhook-settings')).body).toEqual({ answerTimeoutMs: 15_000, holdRetries: false });
			expectProblem(await ctl.post('/webhook-settings', { answerTimeoutMs: 0 }), 400, /answerTimeoutMs must be/);
			expectProblem(await ctl.post('/webhook-settings', { holdRetries: 'yes' }), 400, /holdRetries must be/);
			expect((await ctl.post('/webhook-settings', { answerTimeoutMs: 200 })).body).toEqual({ answerTimeoutMs: 200, holdRetries: false });
			await ctl.post('/webhook-endpoints', { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` });
			const { messageId } = (await ctl.post('/events', { type: 'chat.message.sent' })).body;
			const [first] = await waitFor(async () => {
				const found = (await deliveriesOf(sandbox)).filter((delivery) => delivery.messageId === messageId);
				return found.length >= 1 && found;
			});
			expect(first).toMatchObject({ attempt: 1, error: 'no answer within 200 ms' });
		} finally {
			for (const answer of held) answer();
			await sandbox.close();
			server.closeAllConnections();
			await new Promise((resolve) => server.close(resolve));
		}
	});

	test('holdRetries: a retry that falls due waits until the retries are let go, then goes out; new events still go out at once', async () => {
		const sandbox = await startSandbox({ requestsPerMinute: 0, webhookTimeScale: 0.001 });
		const receiver = await startReceiver((index) => (index === 0 ? 500 : 200));
		try {
			const ctl = control(sandbox);
			await ctl.post('/webhook-endpoints', { url: receiver.url });
			expect((await ctl.post('/webhook-settings', { holdRetries: true })).body).toMatchObject({ holdRetries: true });
			const { messageId } = (await ctl.post('/events', { type: 'chat.message.sent' })).body;
			await waitFor(() => receiver.received.length === 1);
			// Its retry was due after 5 ms (5 s at this scale); it waits, while a new event goes out.
			await new Promise((resolve) => setTimeout(resolve, 200));
			await ctl.post('/events', { type: 'proposal.accepted' });
			await waitFor(() => receiver.received.length === 2);
			await new Promise((resolve) => setTimeout(resolve, 200));
			expect(receiver.received.filter((received) => received.headers['webhook-id'] === messageId)).toHaveLength(1);
			await ctl.post('/webhook-settings', { holdRetries: false });
			await waitFor(() => receiver.received.filter((received) => received.headers['webhook-id'] === messageId).length === 2);
			const attempts = (await deliveriesOf(sandbox)).filter((delivery) => delivery.messageId === messageId);
			expect(attempts.map(({ attempt, status }) => ({ attempt, status }))).toEqual([
				{ attempt: 1, status: 500 },
				{ attempt: 2, status: 200 },
			]);
		} finally {
			await sandbox.close();
			await receiver.close();
		}
	});

	test('close() cancels pending retries', async () => {
		const sandbox = await startSandbox({ requestsPerMinute: 0, webhookTimeScale: 0.01 }); // first retry after 50 ms
		const receiver = await startReceiver(() => 500);
		try {
			const ctl = control(sandbox);
			await ctl.post('/webhook-endpoints', { url: receiver.url });
			await ctl.post('/events', { type: 'chat.message.sent' });
			await waitFor(() => receiver.received.length === 1);
			await sandbox.close();
			await new Promise((r) => setTimeout(r, 200));
			expect(receiver.received).toHaveLength(1);
		} finally {
			await sandbox.close();
			await receiver.close();
		}
	});

	test('POST /_sandbox/reset forgets the events not yet delivered: no retry of an earlier event, and no late answer logged; the endpoint stays', async () => {
		const sandbox = await startSandbox({ requestsPerMinute: 0, webhookTimeScale: 0.01, webhookAnswerTimeoutMs: 5_000 }); // first retry after 50 ms
		let answerHeld: (() => void) | undefined;
		const receiver = await startReceiver((index) => (index === 0 ? 500 : 200));
		const holding: Server = createServer((req, res) => {
			req.resume();
			answerHeld = () => res.writeHead(200).end();
		});
		await new Promise<void>((resolve) => holding.listen(0, '127.0.0.1', resolve));
		try {
			const ctl = control(sandbox);
			await ctl.post('/webhook-endpoints', { url: receiver.url });
			await ctl.post('/webhook-endpoints', { url: `http://127.0.0.1:${(holding.address() as AddressInfo).port}/hook` });
			const before = (await ctl.post('/events', { type: 'chat.message.sent' })).body.messageId;
			await waitFor(() => receiver.received.length === 1 && answerHeld);
			expect((await ctl.post('/reset')).status).toBe(200);
			answerHeld!();
			const after = (await ctl.post('/events', { type: 'chat.message.sent' })).body.messageId;
			await waitFor(() => receiver.received.length === 2);
			// Several times the first retry's wait: time for a (wrong) retry of the earlier event.
			await new Promise((r) => setTimeout(r, 300));
			expect(receiver.received.map((delivery) => String(delivery.headers['webhook-id']))).toEqual([before, after]);
			expect((await deliveriesOf(sandbox)).filter((delivery) => delivery.messageId === before)).toEqual([]);
		} finally {
			answerHeld?.();
			await sandbox.close();
			await receiver.close();
			holding.closeAllConnections();
			await new Promise((resolve) => holding.close(resolve));
		}
	});

	test('a change goes to the endpoints registered when it happens: one registered later does not get it', async () => {
		const sandbox = await startSandbox({ requestsPerMinute: 0, webhookTimeScale: 0.001 });
		const receiver = await startReceiver();
		try {
			const ctl = control(sandbox);
			const before = (await ctl.post('/changes', { kind: 'scheduleBid' })).body.data;
			await ctl.post('/webhook-endpoints', { url: receiver.url });
			const after = (await ctl.post('/changes', { kind: 'scheduleBid' })).body.data;
			await waitFor(() => receiver.received.length === 1);
			// Time for a (wrong) late delivery of the earlier change, even at its first retry's wait.
			await new Promise((r) => setTimeout(r, 100));
			expect(receiver.received.map((delivery) => JSON.parse(delivery.body).data.bidId)).toEqual([after.id]);
			expect(before.id).not.toBe(after.id);
		} finally {
			await sandbox.close();
			await receiver.close();
		}
	});
});

async function deliveriesOf(sandbox: Sandbox): Promise<Array<{ messageId: string; endpointId: string; type: string; attempt: number; status?: number; error?: string }>> {
	return (await control(sandbox).get('/deliveries')).body.data;
}
