/** The trigger through n8n-core's WebhookContext and HookContext, with real raw bodies. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { HookContext } from 'n8n-core';
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { pipelineTiming } from '../../../nodes/shared/transport';
import { AgencyInboxTrigger } from '../../../nodes/AgencyInboxTrigger/AgencyInboxTrigger.node';
import { onceOnlyTiming } from '../../../nodes/AgencyInboxTrigger/onceOnly';
import { deduplicationStore } from '../../helpers/deduplicationStore';
import type { TriggerWorkflow } from '../../helpers/engine';
import { newSigningSecret, signDelivery } from './signedDeliveries';
import { deliver, inAnotherProcess, persistedStaticData, receive, triggerOutput, triggerWith } from './webhookRequests';

const productionSecret = newSigningSecret();
const testSecret = newSigningSecret();
const secrets = { webhookSigningSecret: productionSecret, testWebhookSigningSecret: testSecret };

const payloads = {
	'proposal.accepted': {
		proposal: { uid: 'prop-0001', coverLetter: 'Dear client — happy to help ✓', status: 'submitted', createdAt: '2026-01-01T09:00:00Z' },
		job: { slug: 'react-dev', title: 'React developer', description: 'SPA work', createdAt: '2026-01-01T08:00:00Z' },
		freelancer: { uid: 'mem-001', name: 'Ana', photoUrl: 'https://x/a.png', slug: 'ana' },
		manager: { uid: 'mem-002', name: 'Ben', photoUrl: 'https://x/b.png', slug: 'ben' },
		chat: { id: 'room-001' },
	},
	'chat.message.sent': { proposal: { uid: 'prop-0002' }, message: { text: 'Können wir morgen sprechen?' }, chat: { id: 'room-002' } },
	'bid_intent.scheduled': { jobUid: 'job-77', bidId: 'bid-003' },
	'message.attempt.exhausted': { messageId: 'msg_1', endpointId: 'ep_1' },
} as const;

type EventType = keyof typeof payloads;

function enveloped(type: string, data: object, extra: object = {}) {
	return JSON.stringify({ type, timestamp: '2026-03-04T05:06:07.000Z', data, ...extra });
}

function signedRequest(body: string, secret = productionSecret, options?: { id?: string; at?: Date }) {
	return signDelivery(secret, body, options);
}

// A run reads n8n's deduplication store back after this long (a second in n8n).
onceOnlyTiming.settleMs = 20;

describe('Agency Inbox Trigger: deliveries', () => {
	it.each(Object.keys(payloads) as EventType[])('starts one run for an enveloped %s with {event, deliveryId, timestamp, payload}', async (type) => {
		const trigger = triggerWith({}, secrets);
		const delivery = signedRequest(enveloped(type, payloads[type]), productionSecret, { id: `msg_${type}` });
		const answer = await deliver(trigger, delivery);
		expect(answer.status).toBe(200);
		expect(answer.items).toEqual([
			{ event: type, deliveryId: `msg_${type}`, timestamp: '2026-03-04T05:06:07.000Z', payload: payloads[type] },
		]);
	});

	it.each(['proposal.accepted', 'chat.message.sent', 'bid_intent.scheduled'] as EventType[])(
		'tells %s from the payload shape when the body carries no type, same item shape',
		async (type) => {
			const trigger = triggerWith({}, secrets);
			const at = new Date();
			const answer = await deliver(trigger, signedRequest(JSON.stringify(payloads[type]), productionSecret, { id: 'msg_bare', at }));
			expect(answer.items).toEqual([
				{ event: type, deliveryId: 'msg_bare', timestamp: new Date(Math.floor(at.getTime() / 1000) * 1000).toISOString(), payload: payloads[type] },
			]);
		},
	);

	it('takes the type from eventType as well, and from the shape of data when no type is given', async () => {
		const trigger = triggerWith({}, secrets);
		const byEventType = JSON.stringify({ eventType: 'bid_intent.scheduled', data: payloads['bid_intent.scheduled'] });
		expect((await deliver(trigger, signedRequest(byEventType))).items?.[0]).toMatchObject({ event: 'bid_intent.scheduled', payload: payloads['bid_intent.scheduled'] });
		const untyped = JSON.stringify({ timestamp: '2026-03-04T05:06:07Z', data: payloads['chat.message.sent'] });
		expect((await deliver(trigger, signedRequest(untyped))).items?.[0]).toMatchObject({ event: 'chat.message.sent', payload: payloads['chat.message.sent'] });
	});

	it('runs an unknown shape only under All Events, labelled unknown', async () => {
		const body = JSON.stringify({ something: 'else' });
		const all = await deliver(triggerWith({ events: ['*'] }, secrets), signedRequest(body));
		expect(all.items).toEqual([expect.objectContaining({ event: 'unknown', payload: { something: 'else' } })]);
		const chosen = await deliver(
			triggerWith({ events: ['proposal.accepted', 'chat.message.sent', 'bid_intent.scheduled', 'message.attempt.exhausted'] }, secrets),
			signedRequest(body),
		);
		expect(chosen).toMatchObject({ status: 200, items: undefined });
	});

	it('answers 200 without a run for events not selected', async () => {
		const trigger = triggerWith({ events: ['proposal.accepted'] }, secrets);
		const ignored = await deliver(trigger, signedRequest(enveloped('chat.message.sent', payloads['chat.message.sent'])));
		expect(ignored).toMatchObject({ status: 200, items: undefined, message: expect.stringContaining('not selected') });
		const chosen = await deliver(trigger, signedRequest(enveloped('proposal.accepted', payloads['proposal.accepted'])));
		expect(chosen.items).toHaveLength(1);
	});

	it('verifies the raw bytes: a body re-serialised by a parser is refused', async () => {
		const trigger = triggerWith({}, secrets);
		const delivery = signedRequest(enveloped('chat.message.sent', payloads['chat.message.sent']).replace('{"type"', '{ "type"'));
		const reserialised = { body: Buffer.from(JSON.stringify(JSON.parse(delivery.body.toString()))), headers: delivery.headers };
		expect((await deliver(trigger, delivery)).status).toBe(200);
		expect(await deliver(triggerWith({}, secrets), reserialised)).toMatchObject({ status: 401, items: undefined });
	});
});

describe('Agency Inbox Trigger: replays and duplicates', () => {
	it('answers a replayed delivery id with 200 and no second run, also after a restart', async () => {
		const trigger = triggerWith({}, secrets);
		const body = enveloped('chat.message.sent', payloads['chat.message.sent']);
		const first = signedRequest(body, productionSecret, { id: 'msg_retry' });
		expect((await deliver(trigger, first)).items).toHaveLength(1);
		// The service retries with the same id and a fresh signature and timestamp.
		const retry = signedRequest(body, productionSecret, { id: 'msg_retry', at: new Date(Date.now() + 5_000) });
		expect(await deliver(trigger, retry)).toMatchObject({ status: 200, items: undefined, message: expect.stringContaining('already accepted') });
		expect(await deliver(trigger, first)).toMatchObject({ status: 200, items: undefined });

		// n8n restarts: a new Workflow object built from the persisted static data.
		const restarted = triggerWith({}, secrets, persistedStaticData(trigger));
		expect(await deliver(restarted, retry)).toMatchObject({ status: 200, items: undefined });
		expect((await deliver(restarted, signedRequest(body, productionSecret, { id: 'msg_other' }))).items).toHaveLength(1);
	});

	it('starts one run for two overlapping deliveries of one id, though both saw the same static data', async () => {
		// n8n loads the static data for each request and writes it back afterwards, so a delivery that
		// overlaps another does not see the id the other one stores.
		const loadedBeforeEither = persistedStaticData(triggerWith({}, secrets));
		const [first, second] = [1, 2].map(() => triggerWith({}, secrets, loadedBeforeEither, 'overlapping-deliveries'));
		const delivery = signedRequest(enveloped('chat.message.sent', payloads['chat.message.sent']), productionSecret, { id: 'msg_overlap' });
		const answers = await Promise.all([deliver(first, delivery), deliver(second, delivery)]);
		expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
		expect(answers.filter((answer) => answer.items !== undefined)).toHaveLength(1);
	});

	it('remembers every id of a restart-spanning series in the static data n8n saves, a few bytes each', async () => {
		const trigger = triggerWith({}, secrets);
		const body = enveloped('bid_intent.scheduled', payloads['bid_intent.scheduled']);
		const ids = Array.from({ length: 20 }, (_, index) => `msg_series_${index}`);
		for (const id of ids) expect((await deliver(trigger, signedRequest(body, productionSecret, { id }))).items).toHaveLength(1);
		const saved = persistedStaticData(trigger)['node:Node Under Test'] as IDataObject;
		expect(JSON.stringify(saved.acceptedDeliveries).length).toBeLessThan(20 * 8 + 40);
		const restarted = triggerWith({}, secrets, persistedStaticData(trigger));
		for (const id of ids) {
			const retry = signedRequest(body, productionSecret, { id, at: new Date(Date.now() + 5_000) });
			expect(await deliver(restarted, retry)).toMatchObject({ status: 200, items: undefined });
		}
	});

	it('stops a run at the trigger when an earlier run, in any process, recorded its delivery in n8n\'s deduplication store', async () => {
		const trigger = triggerWith({}, secrets);
		deduplicationStore().record('node', { workflow: trigger.workflow, node: trigger.node }, ['msg_twice']);
		const run = await trigger.runStartedBy([{ json: { event: 'chat.message.sent', deliveryId: 'msg_twice', payload: {} } }, { json: { event: 'chat.message.sent', deliveryId: 'msg_once', payload: {} } }]);
		expect(triggerOutput(run).map((item) => item.deliveryId)).toEqual(['msg_once']);
	});

	it('runs every delivery of a burst whose ids another run already saved as accepted before their runs started', async () => {
		// n8n reads a webhook run's static data from its database when the run starts; a run that ended in
		// between saved every id this process had accepted by then, including ids whose runs wait to start.
		const trigger = triggerWith({}, secrets, {}, 'burst-workflow');
		const body = enveloped('chat.message.sent', payloads['chat.message.sent']);
		const accepted: INodeExecutionData[][] = [];
		for (const id of ['msg_burst_1', 'msg_burst_2', 'msg_burst_3']) accepted.push((await receive(trigger, signedRequest(body, productionSecret, { id }))).workflowData![0]);
		expect(triggerOutput(await trigger.runStartedBy(accepted[0])).map((item) => item.deliveryId)).toEqual(['msg_burst_1']);
		for (const [index, items] of accepted.slice(1).entries()) {
			const loadedAtRunStart = triggerWith({}, secrets, persistedStaticData(trigger), 'burst-workflow');
			expect(triggerOutput(await loadedAtRunStart.runStartedBy(items)).map((item) => item.deliveryId)).toEqual([`msg_burst_${index + 2}`]);
		}
	});

	it('runs a delivery once when two processes start its runs at the same moment, sharing only n8n\'s deduplication store', async () => {
		const delivery = signedRequest(enveloped('chat.message.sent', payloads['chat.message.sent']), productionSecret, { id: 'msg_same_moment' });
		// Queue mode: two webhook processes accept it, two workers run it; each process its own memory.
		const queued = [];
		for (const webhookProcess of ['webhook-a', 'webhook-b']) queued.push((await receive(inAnotherProcess(triggerWith({}, secrets, {}, webhookProcess)), delivery)).workflowData![0]);
		const [firstWorker, secondWorker] = [1, 2].map(() => inAnotherProcess(triggerWith({}, secrets, {}, 'two-workers')));
		const outputs = await Promise.all([firstWorker.runStartedBy(queued[0]), secondWorker.runStartedBy(queued[1])]);
		expect(outputs.flatMap((run) => triggerOutput(run)).map((item) => item.deliveryId)).toEqual(['msg_same_moment']);
	});

	it('hands the webhook process\'s recent ids to the run, so the worker\'s save carries them all (queue mode)', async () => {
		const webhookProcess = inAnotherProcess(triggerWith({}, secrets, {}, 'queue-webhook-process'));
		const body = enveloped('chat.message.sent', payloads['chat.message.sent']);
		const ids = ['msg_queue_1', 'msg_queue_2', 'msg_queue_3'];
		const accepted: INodeExecutionData[][] = [];
		for (const id of ids) accepted.push((await receive(webhookProcess, signedRequest(body, productionSecret, { id }))).workflowData![0]);
		// Only the last run's save survives (another worker's save of the first two was overwritten).
		const worker = inAnotherProcess(triggerWith({}, secrets, {}, 'queue-worker'));
		expect(triggerOutput(await worker.runStartedBy(accepted[2]))).toEqual([
			{ event: 'chat.message.sent', deliveryId: 'msg_queue_3', timestamp: '2026-03-04T05:06:07.000Z', payload: payloads['chat.message.sent'] },
		]);
		const restarted = inAnotherProcess(triggerWith({}, secrets, persistedStaticData(worker), 'queue-webhook-process'));
		for (const id of ids) {
			expect(await deliver(restarted, signedRequest(body, productionSecret, { id, at: new Date(Date.now() + 5_000) }))).toMatchObject({ status: 200, items: undefined });
		}
	});

	it('runs a delivery once on a worker that two webhook processes both queued, before either run saved', async () => {
		const delivery = signedRequest(enveloped('chat.message.sent', payloads['chat.message.sent']), productionSecret, { id: 'msg_two_processes' });
		const queued: INodeExecutionData[][] = [];
		for (const webhookProcess of ['queue-webhook-1', 'queue-webhook-2']) {
			queued.push((await receive(inAnotherProcess(triggerWith({}, secrets, {}, webhookProcess)), delivery)).workflowData![0]);
		}
		// Each run loads the static data as it was before either run saved.
		const worker = inAnotherProcess(triggerWith({}, secrets, {}, 'queue-worker-of-both'));
		expect(triggerOutput(await worker.runStartedBy(queued[0]))).toHaveLength(1);
		expect(triggerOutput(await inAnotherProcess(triggerWith({}, secrets, {}, 'queue-worker-of-both')).runStartedBy(queued[1]))).toEqual([]);
	});

	it('reads the delivery list that version 0.1.0 stored', async () => {
		const legacy = { 'node:Node Under Test': { acceptedDeliveries: [['msg_from_0.1.0', Date.now() - 60_000]] } };
		const trigger = triggerWith({}, secrets, legacy);
		const body = enveloped('chat.message.sent', payloads['chat.message.sent']);
		expect((await deliver(trigger, signedRequest(body, productionSecret, { id: 'msg_from_0.1.0' }))).items).toBeUndefined();
		expect((await deliver(trigger, signedRequest(body, productionSecret, { id: 'msg_new' }))).items).toHaveLength(1);
	});

	it('answers an accepted delivery with a body that says so', async () => {
		const trigger = triggerWith({}, secrets);
		const answer = await deliver(trigger, signedRequest(enveloped('chat.message.sent', payloads['chat.message.sent']), productionSecret, { id: 'msg_said' }));
		expect(answer.result.webhookResponse).toEqual({ message: 'Delivery accepted; run started', deliveryId: 'msg_said' });
		expect(new AgencyInboxTrigger().description.webhooks?.[0].responseData).toBe('');
	});

	it('does not remember a refused delivery: its retry starts the one run', async () => {
		const trigger = triggerWith({}, secrets);
		const body = enveloped('chat.message.sent', payloads['chat.message.sent']);
		const badlySigned = signedRequest(body, newSigningSecret(), { id: 'msg_fix' });
		expect((await deliver(trigger, badlySigned)).status).toBe(401);
		expect((await deliver(trigger, signedRequest(body, productionSecret, { id: 'msg_fix' }))).items).toHaveLength(1);
	});
});

describe('Agency Inbox Trigger: the claim in one process and across processes', () => {
	const body = enveloped('chat.message.sent', payloads['chat.message.sent']);
	const store = deduplicationStore();
	/** Calls to n8n's deduplication store per workflow id. */
	const calls = new Map<string, number>();
	let release: (() => void) | undefined;
	let held: Promise<void> | undefined;

	beforeAll(() => {
		const record = store.checkProcessedAndRecord.bind(store);
		jest.spyOn(store, 'checkProcessedAndRecord').mockImplementation(async (items, scope, context, options) => {
			const workflowId = String(context.workflow.id);
			calls.set(workflowId, (calls.get(workflowId) ?? 0) + 1);
			if (held) await held;
			return await record(items, scope, context, options);
		});
	});
	afterAll(() => jest.restoreAllMocks());

	it('a run in the process that accepted its delivery makes one call to the store; a run in another process records, waits and reads back', async () => {
		const oneProcess = triggerWith({}, secrets, {}, 'default-setup-calls');
		expect((await deliver(oneProcess, signedRequest(body, productionSecret, { id: 'msg_default_setup' }))).items).toHaveLength(1);
		expect(calls.get('default-setup-calls')).toBe(1);

		const accepted = await receive(inAnotherProcess(triggerWith({}, secrets, {}, 'queue-mode-calls')), signedRequest(body, productionSecret, { id: 'msg_queue_mode' }));
		const worker = inAnotherProcess(triggerWith({}, secrets, {}, 'queue-mode-calls'));
		expect(triggerOutput(await worker.runStartedBy(accepted.workflowData![0]))).toHaveLength(1);
		expect(calls.get('queue-mode-calls')).toBe(2);
	});

	it('a run in the process that accepted its delivery stops at the trigger when a run before a restart recorded it', async () => {
		const trigger = triggerWith({}, secrets, {}, 'recorded-before-restart');
		const accepted = await receive(trigger, signedRequest(body, productionSecret, { id: 'msg_before_restart' }));
		store.record('node', { workflow: trigger.workflow, node: trigger.node }, ['msg_before_restart']);
		expect(triggerOutput(await trigger.runStartedBy(accepted.workflowData![0]))).toEqual([]);
	});

	it('the runs of a burst in one process share calls to the store, and each delivery runs once', async () => {
		const trigger = triggerWith({}, secrets, {}, 'burst-shares-calls');
		const ids = Array.from({ length: 20 }, (_, index) => `msg_shared_${index}`);
		const accepted: INodeExecutionData[][] = [];
		for (const id of ids) accepted.push((await receive(trigger, signedRequest(body, productionSecret, { id }))).workflowData![0]);
		// The first call waits (a busy database) while the other runs start and queue behind it.
		held = new Promise((resolve) => (release = resolve));
		const runs = Promise.all(accepted.map(async (items) => triggerOutput(await trigger.runStartedBy(items))));
		await new Promise((resolve) => setTimeout(resolve, 2_000));
		release!();
		held = undefined;
		expect((await runs).flat().map((item) => item.deliveryId).sort()).toEqual([...ids].sort());
		expect(calls.get('burst-shares-calls')).toBeLessThanOrEqual(3);
	});
});

describe('Agency Inbox Trigger: memory', () => {
	const body = enveloped('chat.message.sent', payloads['chat.message.sent']);

	it('lets go of what the process keeps for the trigger when its workflow is deactivated; ids saved in static data are still known', async () => {
		const trigger = triggerWith({}, secrets, {}, 'deactivated-workflow');
		expect((await deliver(trigger, signedRequest(body, productionSecret, { id: 'msg_ran' }))).items).toHaveLength(1);
		// Accepted, its run not started yet: known only in this process.
		expect((await receive(trigger, signedRequest(body, productionSecret, { id: 'msg_only_in_memory' }))).workflowData).toBeDefined();
		expect((await receive(trigger, signedRequest(body, productionSecret, { id: 'msg_only_in_memory' }))).workflowData).toBeUndefined();

		const deactivation = new HookContext(trigger.workflow, trigger.node, trigger.additionalData, 'trigger', 'activate');
		expect(await new AgencyInboxTrigger().webhookMethods.default.delete.call(deactivation)).toBe(true);
		const reactivated = triggerWith({}, secrets, persistedStaticData(trigger), 'deactivated-workflow');
		expect((await receive(reactivated, signedRequest(body, productionSecret, { id: 'msg_only_in_memory' }))).workflowData).toBeDefined();
		expect((await receive(reactivated, signedRequest(body, productionSecret, { id: 'msg_ran' }))).workflowData).toBeUndefined();
	});

	it('beyond 120,000 ids within 19 hours a new delivery still runs, and its run carries a warning that re-deliveries may run again', async () => {
		const digit = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
		const digest = (index: number) => Array.from({ length: 8 }, (_, place) => digit[Math.floor(index / 64 ** place) % 64]).join('');
		const hourNow = Math.floor(Date.now() / 3_600_000);
		const stored: Record<string, string> = {};
		for (let hour = 0; hour < 11; hour++) stored[String(hourNow - hour)] = Array.from({ length: 11_000 }, (_, index) => digest(hour * 11_000 + index)).join('');
		const trigger = triggerWith({}, secrets, { 'node:Node Under Test': { acceptedDeliveries: stored } }, 'beyond-the-cap');
		const accepted = await receive(trigger, signedRequest(body, productionSecret, { id: 'msg_beyond_the_cap' }));
		const run = await trigger.runStartedBy(accepted.workflowData![0]);
		expect(triggerOutput(run).map((item) => item.deliveryId)).toEqual(['msg_beyond_the_cap']);
		const [hint] = (run.data.resultData.runData['Node Under Test'][0] as { hints?: Array<{ message: string }> }).hints ?? [];
		expect(hint?.message).toMatch(/more than 120,000 deliveries within 19 hours.*a re-delivery of one of them starts a second run/);
	});
});

describe('Agency Inbox Trigger: refusals', () => {
	const body = enveloped('chat.message.sent', payloads['chat.message.sent']);

	it('refuses an invalid signature, a stale timestamp and an unsigned delivery with 401 and no run', async () => {
		const trigger = triggerWith({}, secrets);
		const wrong = await deliver(trigger, signedRequest(body, newSigningSecret()));
		expect(wrong).toMatchObject({ status: 401, items: undefined, message: expect.stringContaining('No matching signature') });
		const stale = await deliver(trigger, signedRequest(body, productionSecret, { at: new Date(Date.now() - 10 * 60_000) }));
		expect(stale).toMatchObject({ status: 401, message: expect.stringContaining('too old') });
		const unsigned = await deliver(trigger, { body: Buffer.from(body) });
		expect(unsigned).toMatchObject({ status: 401, message: expect.stringContaining('Missing signature headers') });
	});

	it('refuses with 401 and says what to set when the URL in use has no secret, never echoing secrets', async () => {
		const production = await deliver(triggerWith({}, { testWebhookSigningSecret: testSecret }), signedRequest(body));
		expect(production.status).toBe(401);
		expect(production.message).toContain('No Webhook Signing Secret is set');
		expect(production.message).toContain('Production URL');
		expect(production.message).not.toContain(testSecret);

		const test = await deliver(triggerWith({}, { webhookSigningSecret: productionSecret }), signedRequest(body, testSecret), 'manual');
		expect(test.status).toBe(401);
		expect(test.message).toContain('No Test Webhook Signing Secret is set');
		expect(test.message).toContain('Test URL');
		expect(test.message).not.toContain(productionSecret);
	});

	it('refuses with 401 when the secret is not a signing secret, without repeating it', async () => {
		const answer = await deliver(triggerWith({}, { webhookSigningSecret: 'whsec_not*base64' }), signedRequest(body));
		expect(answer.status).toBe(401);
		expect(answer.message).toContain('not a signing secret');
		expect(answer.message).not.toContain('not*base64');
	});

	it('starts runs without verification only when the user turned it off', async () => {
		const trigger = triggerWith({ options: { verifySignatures: false } }, {});
		const unsigned = await deliver(trigger, { body: Buffer.from(body), headers: { 'webhook-id': 'msg_plain' } });
		expect(unsigned.items).toEqual([expect.objectContaining({ event: 'chat.message.sent', deliveryId: 'msg_plain' })]);
		expect((await deliver(trigger, { body: Buffer.from(body), headers: { 'webhook-id': 'msg_plain' } })).items).toBeUndefined();
		const badlySigned = await deliver(trigger, signedRequest(body, newSigningSecret()));
		expect(badlySigned.items).toHaveLength(1);
	});
});

describe('Agency Inbox Trigger: test and production secrets', () => {
	const body = enveloped('bid_intent.scheduled', payloads['bid_intent.scheduled']);

	it('verifies the Production URL with Webhook Signing Secret only', async () => {
		const trigger = triggerWith({}, secrets);
		expect((await deliver(trigger, signedRequest(body, productionSecret))).items).toHaveLength(1);
		expect((await deliver(trigger, signedRequest(body, testSecret))).status).toBe(401);
	});

	it('verifies the Test URL (manual mode) with Test Webhook Signing Secret only', async () => {
		const trigger = triggerWith({}, secrets);
		expect((await deliver(trigger, signedRequest(body, testSecret), 'manual')).items).toHaveLength(1);
		expect((await deliver(trigger, signedRequest(body, productionSecret), 'manual')).status).toBe(401);
	});
});

describe('Agency Inbox Trigger: the signing key kept between deliveries', () => {
	const body = enveloped('bid_intent.scheduled', payloads['bid_intent.scheduled']);
	/** The credential as the trigger reads it (the test's credential store), and how often it is read. */
	const credentialOf = (trigger: TriggerWorkflow) => {
		const helper = trigger.additionalData.credentialsHelper as unknown as { credentials: Record<string, Record<string, unknown>> };
		return helper.credentials.agencyInboxApi;
	};

	it('reads the credential once for a series of deliveries; a secret just pasted applies at once, one removed is refused once the new one was read', async () => {
		const trigger = triggerWith({}, { webhookSigningSecret: productionSecret });
		const reads = jest.spyOn(trigger.additionalData.credentialsHelper, 'getDecrypted');
		for (let delivery = 0; delivery < 5; delivery++) expect((await deliver(trigger, signedRequest(body))).status).toBe(200);
		expect(reads).toHaveBeenCalledTimes(1);

		const pasted = newSigningSecret();
		credentialOf(trigger).webhookSigningSecret = pasted;
		// Within the kept time the removed secret still verifies; the new one applies at once.
		expect((await deliver(trigger, signedRequest(body, productionSecret))).status).toBe(200);
		expect((await deliver(trigger, signedRequest(body, pasted))).status).toBe(200);
		expect((await deliver(trigger, signedRequest(body, productionSecret))).status).toBe(401);
	});
});

describe('Agency Inbox Trigger: sender allowlist', () => {
	const body = enveloped('bid_intent.scheduled', payloads['bid_intent.scheduled']);

	it.each([
		['52.215.16.239', true],
		['54.216.8.72', true],
		['63.33.109.123', true],
		['::ffff:63.33.109.123', true],
		['2a05:d028:17:8000::1', true],
		['2a05:d028:17:80ff:ffff:ffff:ffff:ffff', true],
		['2a05:d028:17:8100::1', false],
		['52.215.16.238', false],
		['::ffff:10.0.0.1', false],
		['127.0.0.1', false],
		['::1', false],
	])('with the allowlist on, %s is allowed: %s', async (ip, allowed) => {
		const trigger = triggerWith({ options: { onlyServiceSenders: true } }, secrets);
		const answer = await deliver(trigger, { ...signedRequest(body), ip });
		expect(answer.status).toBe(allowed ? 200 : 403);
		expect(answer.items?.length ?? 0).toBe(allowed ? 1 : 0);
	});

	it('is off by default', async () => {
		const answer = await deliver(triggerWith({}, secrets), { ...signedRequest(body), ip: '203.0.113.9' });
		expect(answer.items).toHaveLength(1);
	});
});

describe('Agency Inbox Trigger: activation', () => {
	let server: Server;
	let baseUrl: string;
	let agencyStatus = 200;
	const seenAuthorization: string[] = [];

	const productionBackoff = pipelineTiming.retryBackoffMs;

	beforeAll(async () => {
		pipelineTiming.retryBackoffMs = [1, 1, 1]; // the pipeline retries reads after network errors
		server = createServer((request, response) => {
			seenAuthorization.push(String(request.headers.authorization));
			const found = request.url === '/service/v1/agency';
			response.writeHead(found ? agencyStatus : 404, { 'content-type': 'application/json' });
			response.end(JSON.stringify(found && agencyStatus === 200 ? { data: { uid: 'agency-1' } } : { status: agencyStatus }));
		});
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/service/`;
	});

	afterAll(async () => {
		pipelineTiming.retryBackoffMs = productionBackoff;
		await new Promise((resolve) => server.close(resolve));
	});

	async function activate(trigger: TriggerWorkflow, mode: 'trigger' | 'manual' = 'trigger', activation: 'activate' | 'init' | 'manual' = 'activate') {
		const context = new HookContext(trigger.workflow, trigger.node, trigger.additionalData, mode, activation);
		const methods = new AgencyInboxTrigger().webhookMethods.default;
		expect(await methods.checkExists.call(context)).toBe(false);
		return await methods.create.call(context);
	}

	it('registers nothing and succeeds when the secret is set and the service answers', async () => {
		agencyStatus = 200;
		seenAuthorization.length = 0;
		expect(await activate(triggerWith({}, { ...secrets, baseUrl }))).toBe(true);
		expect(seenAuthorization).toEqual(['Bearer sandbox-key-1']);
		expect(await activate(triggerWith({}, { ...secrets, baseUrl }), 'manual', 'manual')).toBe(true);
	});

	it('fails early naming the missing secret of the URL in use', async () => {
		agencyStatus = 200;
		await expect(activate(triggerWith({}, { testWebhookSigningSecret: testSecret, baseUrl }))).rejects.toThrow(
			/No Webhook Signing Secret is set/,
		);
		await expect(activate(triggerWith({}, { webhookSigningSecret: productionSecret, baseUrl }), 'manual', 'manual')).rejects.toThrow(
			/No Test Webhook Signing Secret is set/,
		);
		expect(await activate(triggerWith({ options: { verifySignatures: false } }, { baseUrl }))).toBe(true);
	});

	it('fails early when the credential cannot reach the service, without echoing the key', async () => {
		agencyStatus = 403;
		const refused = activate(triggerWith({}, { ...secrets, baseUrl }));
		await expect(refused).rejects.toThrow(/rejected the API key \(HTTP 403\)/);
		await expect(refused).rejects.not.toThrow(/sandbox-key-1/);
		await expect(activate(triggerWith({}, { ...secrets, baseUrl: 'http://127.0.0.1:9/service' }))).rejects.toThrow(
			/GET \/v1\/agency failed: Could not reach the Agency Inbox service\. Check the Base URL/,
		);
	});

	it('does not let a service outage block reactivation when n8n restarts', async () => {
		agencyStatus = 503;
		expect(await activate(triggerWith({}, { ...secrets, baseUrl }), 'trigger', 'init')).toBe(true);
	});

	it('deletes nothing', async () => {
		const trigger = triggerWith({}, secrets);
		const context = new HookContext(trigger.workflow, trigger.node, trigger.additionalData, 'trigger', 'activate');
		expect(await new AgencyInboxTrigger().webhookMethods.default.delete.call(context)).toBe(true);
	});
});
