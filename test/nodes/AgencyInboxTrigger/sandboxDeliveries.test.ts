/**
 * The sandbox's webhook sender (standardwebhooks signatures, the spec's retry schedule) delivering
 * over real HTTP to a loopback server that hands each request to the trigger the way n8n's webhook
 * server does: raw body bytes, parsed body, headers, client address; n8n answers itself unless the
 * node answered: at once when no run starts, else when the run has ended (200, or 500 when it failed).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { HookContext } from 'n8n-core';
import type { IDataObject } from 'n8n-workflow';

import { AgencyInboxTrigger } from '../../../nodes/AgencyInboxTrigger/AgencyInboxTrigger.node';

import { startSandbox, type Sandbox } from '../../../sandbox';
import type { TriggerWorkflow } from '../../helpers/engine';
import { triggerOutput, triggerWith } from './webhookRequests';
import { waitFor } from '../../helpers/waitFor';

/** What the loopback server does with the next request before (or instead of) the trigger. */
type Fault = 'answer503' | 'dropAnswerAfterTrigger';

class LoopbackN8n {
	readonly runs: IDataObject[] = [];
	readonly answers: number[] = [];
	readonly faults: Fault[] = [];
	private server!: Server;
	url = '';

	constructor(private readonly trigger: TriggerWorkflow) {}

	async start() {
		this.server = createServer((request, response) => void this.handle(request, response));
		await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
		this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/webhook/agency-inbox`;
	}

	async close() {
		this.server.closeAllConnections();
		await new Promise((resolve) => this.server.close(resolve));
	}

	private async handle(request: IncomingMessage, response: ServerResponse) {
		const chunks: Buffer[] = [];
		for await (const chunk of request) chunks.push(chunk as Buffer);
		const rawBody = Buffer.concat(chunks);
		const fault = this.faults.shift();
		if (fault === 'answer503') {
			this.answer(response, 503, { message: 'n8n is restarting' });
			return;
		}
		const n8nRequest = Object.assign(request, {
			rawBody,
			body: JSON.parse(rawBody.toString('utf8')) as unknown,
			readRawBody: async () => {},
			ip: request.socket.remoteAddress,
			params: {},
			query: {},
		});
		const result = await this.trigger.webhook(n8nRequest, response);
		if (result.noWebhookResponse) {
			this.answers.push(response.statusCode);
			return;
		}
		const started = result.workflowData?.[0];
		if (!started) {
			this.answer(response, 200, result.webhookResponse as IDataObject);
			return;
		}
		const run = await this.trigger.runStartedBy(started);
		this.runs.push(...triggerOutput(run));
		// The run ended: n8n answers (responseMode lastNode, no data), also into a connection already lost.
		if (fault === 'dropAnswerAfterTrigger') request.socket.destroy();
		this.answer(response, run.data.resultData.error ? 500 : 200);
	}

	private answer(response: ServerResponse, status: number, body?: IDataObject) {
		this.answers.push(status);
		response.writeHead(status, { 'content-type': 'application/json' });
		response.end(body ? JSON.stringify(body) : undefined);
	}
}

interface DeliveryRecord {
	messageId: string;
	type: string;
	attempt: number;
	status?: number;
	error?: string;
}

async function control(sandbox: Sandbox, method: string, path: string, body?: object) {
	const response = await fetch(`${sandbox.origin}/_sandbox${path}`, {
		method,
		headers: { 'content-type': 'application/json' },
		body: body ? JSON.stringify(body) : undefined,
	});
	return (await response.json()) as IDataObject;
}

async function deliveries(sandbox: Sandbox): Promise<DeliveryRecord[]> {
	return (await control(sandbox, 'GET', '/deliveries')).data as unknown as DeliveryRecord[];
}

function succeeded(sandbox: Sandbox, messageId: string) {
	return async () => (await deliveries(sandbox)).find((d) => d.messageId === messageId && d.status === 200);
}

describe('Agency Inbox Trigger with the sandbox sender over HTTP', () => {
	let sandbox: Sandbox;
	let n8n: LoopbackN8n;
	let endpointId: string;

	beforeEach(async () => {
		// 5 s .. 10 h retry waits become 0.25 ms .. 1.8 s
		sandbox = await startSandbox({ webhookTimeScale: 0.00005 });
		const trigger = triggerWith({}, { baseUrl: sandbox.url, apiKey: sandbox.apiKey, webhookSigningSecret: sandbox.signingSecret });
		n8n = new LoopbackN8n(trigger);
		await n8n.start();
		endpointId = (await control(sandbox, 'POST', '/webhook-endpoints', { url: n8n.url })).id as string;
	});

	afterEach(async () => {
		await sandbox.close();
		await n8n.close();
	});

	it.each(['proposal.accepted', 'chat.message.sent', 'bid_intent.scheduled'])('delivers %s as one run with the payload under data', async (type) => {
		const { messageId } = await control(sandbox, 'POST', '/events', { type });
		await waitFor(succeeded(sandbox, messageId as string));
		expect(n8n.runs).toEqual([
			{ event: type, deliveryId: messageId, timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), payload: expect.any(Object) },
		]);
	});

	it('starts one run when the first answer failed before reaching the trigger (503, then the retry)', async () => {
		n8n.faults.push('answer503');
		const { messageId } = await control(sandbox, 'POST', '/events', { type: 'chat.message.sent' });
		await waitFor(succeeded(sandbox, messageId as string));
		const attempts = (await deliveries(sandbox)).filter((d) => d.messageId === messageId);
		expect(attempts.map((d) => d.status)).toEqual([503, 200]);
		expect(n8n.runs).toHaveLength(1);
		expect(n8n.runs[0]).toMatchObject({ event: 'chat.message.sent', deliveryId: messageId });
	});

	it('starts one run when its run ended but the 200 was lost: the retry is answered 200 without a run', async () => {
		n8n.faults.push('dropAnswerAfterTrigger');
		const { messageId } = await control(sandbox, 'POST', '/events', { type: 'bid_intent.scheduled' });
		await waitFor(succeeded(sandbox, messageId as string));
		const attempts = (await deliveries(sandbox)).filter((d) => d.messageId === messageId);
		expect(attempts).toHaveLength(2);
		expect(attempts[0].error).toBeDefined();
		expect(n8n.runs).toHaveLength(1);
	});

	it('receives message.attempt.exhausted after every attempt of a message failed', async () => {
		n8n.faults.push(...Array<Fault>(7).fill('answer503'));
		const { messageId } = await control(sandbox, 'POST', '/events', { type: 'proposal.accepted', endpointId });
		const exhausted = await waitFor(async () => (await deliveries(sandbox)).find((d) => d.type === 'message.attempt.exhausted' && d.status === 200));
		expect((await deliveries(sandbox)).filter((d) => d.messageId === messageId)).toHaveLength(7);
		expect(n8n.runs).toEqual([expect.objectContaining({ event: 'message.attempt.exhausted', deliveryId: exhausted.messageId })]);
	});

	it('refuses deliveries signed with another endpoint secret, and the sender keeps retrying', async () => {
		const other = await control(sandbox, 'POST', '/webhook-endpoints', { url: n8n.url, secret: `whsec_${Buffer.alloc(24, 7).toString('base64')}` });
		await control(sandbox, 'POST', '/events', { type: 'chat.message.sent', endpointId: other.id });
		await waitFor(async () => ((await deliveries(sandbox)).filter((d) => d.status === 401).length >= 2 ? true : undefined));
		expect(n8n.runs).toHaveLength(0);
	});

	it('activates against the service with a valid key and refuses an unknown key', async () => {
		const create = new AgencyInboxTrigger().webhookMethods.default.create;
		const activate = async (apiKey: string) => {
			const trigger = triggerWith({}, { baseUrl: `${sandbox.url}/`, apiKey, webhookSigningSecret: sandbox.signingSecret });
			return await create.call(new HookContext(trigger.workflow, trigger.node, trigger.additionalData, 'trigger', 'activate'));
		};
		expect(await activate(sandbox.apiKey)).toBe(true);
		await expect(activate('not-a-key')).rejects.toThrow(/rejected the API key \(HTTP 403\)/);
	});
});
