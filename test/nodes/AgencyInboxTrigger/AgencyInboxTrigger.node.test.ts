/** The trigger through n8n-core's WebhookContext and HookContext, with real raw bodies. */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { Logger } from '@n8n/backend-common';
import { Container } from '@n8n/di';
import { HookContext } from 'n8n-core';
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { processMemoryStores } from '../../../nodes/shared/processMemory';
import { pipelineTiming } from '../../../nodes/shared/transport';
import { AgencyInboxTrigger } from '../../../nodes/AgencyInboxTrigger/AgencyInboxTrigger.node';
import { leaseTiming } from '../../../nodes/AgencyInboxTrigger/onceOnly/deliveryLease';
import { MAX_ATTEMPTS } from '../../../nodes/AgencyInboxTrigger/onceOnly/queueModeClaim';
import { claimEntry, tokenEntry } from '../../../nodes/AgencyInboxTrigger/onceOnly/storeEntries';
import { storeTiming } from '../../../nodes/AgencyInboxTrigger/onceOnly/storeLine';
import { deduplicationStore } from '../../helpers/deduplicationStore';
import type { TriggerWorkflow } from '../../helpers/engine';
import { newSigningSecret, signDelivery } from './signedDeliveries';
import { RecordedResponse, answerAfterRun, deliver, inAnotherProcess, killProcess, persistedStaticData, receive, triggerOutput, triggerWith } from './webhookRequests';
import { waitFor } from '../../helpers/waitFor';

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

// A run reads n8n's deduplication store back after this long (a second in n8n), and a lease is kept
// in slots of 400 ms renewed every 100 ms (20 s and 5 s in n8n), held 3 s after the claim (5 minutes).
storeTiming.settleMs = 20;
Object.assign(leaseTiming, { slotMs: 400, renewMs: 100, probeGapMs: 150, maxHoldMs: 3_000 });

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

describe('Agency Inbox Trigger: acknowledged once its run ended, one run per delivery', () => {
	const body = enveloped('chat.message.sent', payloads['chat.message.sent']);
	const retryOf = (id: string) => signedRequest(body, productionSecret, { id, at: new Date(Date.now() + 5_000) });
	/** One delivery per id, each starting a run: the items of each, and the response n8n answers it on. */
	const acceptEach = async (trigger: TriggerWorkflow, ids: string[]) => {
		const responses = ids.map(() => new RecordedResponse());
		const accepted = [];
		for (const [index, id] of ids.entries()) accepted.push((await receive(trigger, signedRequest(body, productionSecret, { id }), responses[index])).workflowData![0]);
		return { responses, accepted };
	};

	it('answers 200 once the run ended; a re-delivery then gets 200 and no second run, also after a restart', async () => {
		const trigger = triggerWith({}, secrets);
		expect(await deliver(trigger, signedRequest(body, productionSecret, { id: 'msg_retry' }))).toMatchObject({ status: 200, items: [expect.objectContaining({ deliveryId: 'msg_retry' })] });
		expect(await deliver(trigger, retryOf('msg_retry'))).toMatchObject({ status: 200, items: undefined, message: 'Delivery already run; no second run' });
		// n8n restarts: another process, the static data as the run saved it.
		const restarted = inAnotherProcess(triggerWith({}, secrets, persistedStaticData(trigger), trigger.workflow.id));
		expect(await deliver(restarted, retryOf('msg_retry'))).toMatchObject({ status: 200, items: undefined });
		expect((await deliver(restarted, signedRequest(body, productionSecret, { id: 'msg_other' }))).items).toHaveLength(1);
	});

	it('answers a re-delivery 409 with no run while the delivery\'s run goes on, and 200 with no run once it ended', async () => {
		const trigger = triggerWith({}, secrets);
		const response = new RecordedResponse();
		const accepted = await receive(trigger, signedRequest(body, productionSecret, { id: 'msg_long_run' }), response);
		expect(await deliver(trigger, retryOf('msg_long_run'))).toMatchObject({ status: 409, items: undefined, message: expect.stringContaining('acknowledged once its run has ended') });
		// The run ends: n8n saves its static data, then answers.
		const run = await trigger.runStartedBy(accepted.workflowData![0]);
		expect(await deliver(trigger, retryOf('msg_long_run'))).toMatchObject({ status: 200, items: undefined, message: 'Delivery already run; no second run' });
		expect(answerAfterRun(response, run)).toBe(200);
	});

	it('learns from n8n\'s answer that the run ended, also when the sender hung up before it (the service waits about 15 s)', async () => {
		const trigger = triggerWith({}, secrets);
		const response = new RecordedResponse();
		const accepted = await receive(trigger, signedRequest(body, productionSecret, { id: 'msg_hung_up' }), response);
		response.hangUp();
		const savedBefore = persistedStaticData(trigger);
		const run = await trigger.runStartedBy(accepted.workflowData![0]);
		// Another run's save overwrote this one's: only the answer tells the process that the run ended.
		trigger.savedStaticData = savedBefore;
		expect(await deliver(trigger, retryOf('msg_hung_up'))).toMatchObject({ status: 409 });
		answerAfterRun(response, run);
		await waitFor(async () => (await deliver(trigger, retryOf('msg_hung_up'))).status === 200, 'a retry of the hung-up delivery answered 200');
		expect(await deliver(trigger, retryOf('msg_hung_up'))).toMatchObject({ status: 200, items: undefined });
	});

	it('learns that the run ended when the sender hung up before webhook() was called (a busy n8n), on a real Node response', async () => {
		const trigger = triggerWith({}, secrets, {}, 'hung-up-early');
		const request = signedRequest(body, productionSecret, { id: 'msg_hung_up_early' });
		// A loopback server hands its response to webhook() only once the sender has gone: 'close' fired before.
		let accepted: Promise<{ response: ServerResponse; items: INodeExecutionData[] }> | undefined;
		const server = createServer((_incoming, response) => {
			accepted = new Promise((resolve) =>
				response.once('close', async () => resolve({ response, items: (await receive(trigger, request, response as never)).workflowData![0] })),
			);
		});
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		try {
			const sender = fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { method: 'POST', body: '{}', signal: AbortSignal.timeout(200) });
			await expect(sender).rejects.toThrow();
			await waitFor(async () => accepted !== undefined, 'the request reached the server');
			const { response, items } = await accepted!;
			expect(response.closed).toBe(true);
			const run = await trigger.runStartedBy(items);
			expect(deduplicationStore().holdsAny(trigger.workflow, trigger.node, ['msg_hung_up_early open'])).toBe(true);
			// n8n ends the response once the run ended, though nobody listens: the open entry goes.
			answerAfterRun(response as never, run);
			await waitFor(async () => !deduplicationStore().holdsAny(trigger.workflow, trigger.node, ['msg_hung_up_early open']), 'the open entry removed from the store');
			trigger.savedStaticData = {};
			expect(await deliver(trigger, retryOf('msg_hung_up_early'))).toMatchObject({ status: 200, items: undefined, message: 'Delivery already run; no second run' });
		} finally {
			server.close();
		}
	});

	it('runs a delivery again after a crash cut its run (never answered): the re-delivery reaches the next node', async () => {
		const trigger = triggerWith({}, secrets, {}, 'crash-cut');
		const accepted = await receive(trigger, signedRequest(body, productionSecret, { id: 'msg_cut' }));
		// Its run started, then n8n was killed: no answer, no save at the run's end.
		const cut = trigger.runStartedBy(accepted.workflowData![0]);
		const savedBefore = persistedStaticData(trigger);
		await cut;
		const restarted = inAnotherProcess(triggerWith({}, secrets, savedBefore, 'crash-cut'));
		expect(await deliver(restarted, retryOf('msg_cut'))).toMatchObject({ status: 200, items: [expect.objectContaining({ deliveryId: 'msg_cut' })] });
		expect(await deliver(restarted, retryOf('msg_cut'))).toMatchObject({ status: 200, items: undefined });
	});

	it('saves a delivery\'s id with its own run\'s end only: a run that ended meanwhile does not save the id of one still going', async () => {
		const trigger = triggerWith({}, secrets, {}, 'no-early-save');
		const going = await receive(trigger, signedRequest(body, productionSecret, { id: 'msg_still_going' }));
		const goingRun = trigger.runStartedBy(going.workflowData![0]);
		expect((await deliver(trigger, signedRequest(body, productionSecret, { id: 'msg_ended' }))).items).toHaveLength(1);
		const saved = persistedStaticData(trigger);
		await goingRun;
		// Killed now: after the restart the one still going runs again, the one that ended does not.
		const restarted = inAnotherProcess(triggerWith({}, secrets, saved, 'no-early-save'));
		expect((await deliver(restarted, retryOf('msg_ended'))).items).toBeUndefined();
		expect((await deliver(restarted, retryOf('msg_still_going'))).items).toHaveLength(1);
	});

	it('keeps every id of overlapping runs in the static data, whichever run saves last (one process)', async () => {
		const trigger = triggerWith({}, secrets, {}, 'overlapping-saves');
		const ids = ['msg_overlap_1', 'msg_overlap_2', 'msg_overlap_3'];
		const { responses, accepted } = await acceptEach(trigger, ids);
		// All three runs loaded the static data before any ended; each saves at its end, then n8n answers it.
		const loadedAtStart = persistedStaticData(trigger);
		for (const [index, items] of accepted.entries()) answerAfterRun(responses[index], await trigger.runStartedBy(items, 'webhook', { staticData: loadedAtStart }));
		const restarted = inAnotherProcess(triggerWith({}, secrets, persistedStaticData(trigger), 'overlapping-saves'));
		for (const id of ids) expect(await deliver(restarted, retryOf(id))).toMatchObject({ status: 200, items: undefined });
	});

	it('lets no delivery of runs that ended together run again after a restart, when their senders had hung up and each save lacked the others\' ids', async () => {
		const trigger = triggerWith({}, secrets, {}, 'overlapping-unanswered');
		const ids = ['msg_together_1', 'msg_together_2', 'msg_together_3'];
		const { responses, accepted } = await acceptEach(trigger, ids);
		// The runs wait on the budget past the service's answer timeout: it hangs up on each.
		for (const response of responses) response.hangUp();
		// They end together: each saves before n8n has answered any, so the last save has one id only.
		const loadedAtStart = persistedStaticData(trigger);
		const runs = [];
		for (const items of accepted) runs.push(await trigger.runStartedBy(items, 'webhook', { staticData: loadedAtStart }));
		for (const [index, run] of runs.entries()) answerAfterRun(responses[index], run);
		const saved = persistedStaticData(trigger);
		await waitFor(async () => !deduplicationStore().holdsAny(trigger.workflow, trigger.node, ids.map((id) => `${id} open`)), 'the open entries removed from the store');
		// n8n restarts before the service's next retry: its process memory is gone.
		const restarted = inAnotherProcess(triggerWith({}, secrets, saved, 'overlapping-unanswered'));
		for (const id of ids) {
			const answer = await deliver(restarted, retryOf(id));
			expect({ id, status: answer.status, passed: answer.items ?? [] }).toEqual({ id, status: 200, passed: [] });
		}
		for (const id of ids) expect(await deliver(restarted, retryOf(id))).toMatchObject({ status: 200, items: undefined, message: 'Delivery already run; no second run' });
	});

	it('treats a failed run as run (n8n answers it 500): the service\'s re-delivery starts none, also after a restart', async () => {
		const trigger = triggerWith({}, secrets, {}, 'failed-run');
		const response = new RecordedResponse();
		const accepted = await receive(trigger, signedRequest(body, productionSecret, { id: 'msg_failed' }), response);
		const run = await trigger.runStartedBy(accepted.workflowData![0]);
		// A node after the trigger failed: n8n saved the static data at the run's end and answered 500.
		expect(triggerOutput(run)).toHaveLength(1);
		response.writeHead(500).end('{"message":"Error in workflow"}');
		expect(await deliver(trigger, retryOf('msg_failed'))).toMatchObject({ status: 200, items: undefined });
		const restarted = inAnotherProcess(triggerWith({}, secrets, persistedStaticData(trigger), 'failed-run'));
		expect(await deliver(restarted, retryOf('msg_failed'))).toMatchObject({ status: 200, items: undefined });
	});

	it('runs a delivery on the service\'s retry when n8n answered it 500 without starting its run', async () => {
		const trigger = triggerWith({}, secrets, {}, 'run-not-started');
		expect((await deliver(trigger, signedRequest(body, productionSecret, { id: 'msg_ran_before' }))).items).toHaveLength(1);
		const response = new RecordedResponse();
		expect((await receive(trigger, signedRequest(body, productionSecret, { id: 'msg_not_started' }), response)).workflowData).toBeDefined();
		// n8n could not start the run (its database refused the execution, say) and answered 500.
		response.writeHead(500).end('{"message":"There was a problem executing the workflow"}');
		expect((await deliver(trigger, retryOf('msg_not_started'))).items).toEqual([expect.objectContaining({ deliveryId: 'msg_not_started' })]);
	});

	it('starts one run for two overlapping deliveries of one id in one process', async () => {
		const trigger = triggerWith({}, secrets);
		const delivery = signedRequest(body, productionSecret, { id: 'msg_overlap' });
		const [first, second] = await Promise.all([receive(trigger, delivery), receive(trigger, delivery)]);
		expect([first, second].filter((result) => result.workflowData !== undefined)).toHaveLength(1);
	});

	it('remembers every id of a restart-spanning series in the static data n8n saves, a few bytes each', async () => {
		const trigger = triggerWith({}, secrets);
		const ids = Array.from({ length: 20 }, (_, index) => `msg_series_${index}`);
		for (const id of ids) expect((await deliver(trigger, signedRequest(body, productionSecret, { id }))).items).toHaveLength(1);
		const saved = persistedStaticData(trigger)['node:Node Under Test'] as IDataObject;
		expect(JSON.stringify(saved.acceptedDeliveries).length).toBeLessThan(20 * 8 + 40);
		const restarted = inAnotherProcess(triggerWith({}, secrets, persistedStaticData(trigger), trigger.workflow.id));
		for (const id of ids) expect(await deliver(restarted, retryOf(id))).toMatchObject({ status: 200, items: undefined });
	});

	it('reads the delivery list that version 0.1.0 stored', async () => {
		const legacy = { 'node:Node Under Test': { acceptedDeliveries: [['msg_from_0.1.0', Date.now() - 60_000]] } };
		const trigger = triggerWith({}, secrets, legacy);
		expect((await deliver(trigger, signedRequest(body, productionSecret, { id: 'msg_from_0.1.0' }))).items).toBeUndefined();
		expect((await deliver(trigger, signedRequest(body, productionSecret, { id: 'msg_new' }))).items).toHaveLength(1);
	});

	it('answers through n8n once the run ended, with an empty 200 (responseMode lastNode, responseData noData)', async () => {
		const [webhook] = new AgencyInboxTrigger().description.webhooks!;
		expect(webhook).toMatchObject({ responseMode: 'lastNode', responseData: 'noData' });
		const trigger = triggerWith({}, secrets);
		const answer = await deliver(trigger, signedRequest(body, productionSecret, { id: 'msg_said' }));
		expect(answer).toMatchObject({ status: 200, items: [expect.objectContaining({ deliveryId: 'msg_said' })] });
		expect(answer.result.webhookResponse).toBeUndefined();
	});

	it('does not remember a refused delivery: its retry starts the one run', async () => {
		const trigger = triggerWith({}, secrets);
		const badlySigned = signedRequest(body, newSigningSecret(), { id: 'msg_fix' });
		expect((await deliver(trigger, badlySigned)).status).toBe(401);
		expect((await deliver(trigger, signedRequest(body, productionSecret, { id: 'msg_fix' }))).items).toHaveLength(1);
	});
});

describe('Agency Inbox Trigger: the user\'s Retry and the Test URL', () => {
	const body = enveloped('chat.message.sent', payloads['chat.message.sent']);

	it('lets the user\'s Retry of an execution through, though the delivery ran and n8n\'s store has it, and saves nothing', async () => {
		const trigger = triggerWith({}, secrets, {}, 'user-retry');
		const accepted = await receive(trigger, signedRequest(body, productionSecret, { id: 'msg_retried' }));
		expect(triggerOutput(await trigger.runStartedBy(accepted.workflowData![0]))).toHaveLength(1);
		deduplicationStore().record('node', { workflow: trigger.workflow, node: trigger.node }, ['msg_retried']);
		const saved = persistedStaticData(trigger);
		// A crashed execution's Retry runs the trigger node again with the delivery's item (note included).
		const retried = await inAnotherProcess(trigger).runStartedBy(accepted.workflowData![0], 'retry');
		expect(triggerOutput(retried)).toEqual([expect.objectContaining({ deliveryId: 'msg_retried' })]);
		expect(triggerOutput(retried)[0]).not.toHaveProperty('agencyInboxAcceptance');
		expect(persistedStaticData(trigger)).toEqual(saved);
	});

	it("names in a crashed execution's Retry the execution that ran its delivery again (from memory, or the static data it loads), null where none did", async () => {
		const trigger = triggerWith({}, secrets, {}, 'retry-after-rerun');
		const accepted = await receive(trigger, signedRequest(body, productionSecret, { id: 'msg_rerun' }));
		const other = await receive(trigger, signedRequest(body, productionSecret, { id: 'msg_not_rerun' }));
		// Both runs started, then n8n was killed: no answer, no save at their end.
		const staticDataAtStart = persistedStaticData(trigger);
		await trigger.runStartedBy(accepted.workflowData![0]);
		await trigger.runStartedBy(other.workflowData![0]);
		const restarted = inAnotherProcess(triggerWith({}, secrets, staticDataAtStart, 'retry-after-rerun'));
		const again = await receive(restarted, signedRequest(body, productionSecret, { id: 'msg_rerun', at: new Date(Date.now() + 5_000) }));
		expect(triggerOutput(await restarted.runStartedBy(again.workflowData![0], 'webhook', { executionId: 'execution-42' }))).toHaveLength(1);

		const retryIn = async (process: TriggerWorkflow, items: INodeExecutionData[], staticData: IDataObject) =>
			triggerOutput(await process.runStartedBy(items, 'retry', { staticData, executionId: 'execution-43' }))[0];
		// In the process that ran it again; in another with the static data saved since; with the cut run's own.
		expect(await retryIn(restarted, accepted.workflowData![0], staticDataAtStart)).toMatchObject({ deliveryId: 'msg_rerun', ranAgainIn: 'execution-42' });
		const elsewhere = inAnotherProcess(triggerWith({}, secrets, {}, 'retry-after-rerun'));
		expect(await retryIn(elsewhere, accepted.workflowData![0], persistedStaticData(restarted))).toMatchObject({ deliveryId: 'msg_rerun', ranAgainIn: 'execution-42' });
		expect(await retryIn(inAnotherProcess(triggerWith({}, secrets, {}, 'retry-after-rerun')), accepted.workflowData![0], staticDataAtStart)).toMatchObject({ ranAgainIn: null });
		expect(await retryIn(restarted, other.workflowData![0], persistedStaticData(restarted))).toMatchObject({ deliveryId: 'msg_not_rerun', ranAgainIn: null });
	});

	it('shows a test delivery whatever production did with the same id; a listening session that ends leaves production as it was', async () => {
		const service = createServer((_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end('{"data":{"uid":"agency-1"}}'));
		await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
		try {
			const baseUrl = `http://127.0.0.1:${(service.address() as AddressInfo).port}/service`;
			const trigger = triggerWith({}, { ...secrets, baseUrl }, {}, 'test-and-production');
			const production = (id: string) => signedRequest(body, productionSecret, { id });
			expect((await deliver(trigger, production('msg_both_urls'))).items).toHaveLength(1);
			const goingResponse = new RecordedResponse();
			const going = await receive(trigger, production('msg_going_on'), goingResponse);

			// The editor listens: n8n registers the Test URL (create() in manual mode); the same ids arrive there.
			const methods = new AgencyInboxTrigger().webhookMethods.default;
			expect(await methods.create.call(new HookContext(trigger.workflow, trigger.node, trigger.additionalData, 'manual', 'manual', { isTest: true } as never))).toBe(true);
			for (const id of ['msg_both_urls', 'msg_going_on']) {
				expect((await deliver(trigger, signedRequest(body, testSecret, { id }), 'manual')).items).toEqual([expect.objectContaining({ deliveryId: id })]);
			}
			// The session ends: n8n calls delete() in the mode and activation of a deactivation. Only the Test URL's entries go.
			const entries = () => Object.fromEntries(processMemoryStores().map((store) => [store.name, store.entries]));
			const before = entries();
			expect(await methods.delete.call(new HookContext(trigger.workflow, trigger.node, trigger.additionalData, 'internal', 'update', { isTest: true } as never))).toBe(true);
			expect(entries()).toEqual({ ...before, 'signing keys': before['signing keys'] - 1, 'listening sessions at the Test URL': before['listening sessions at the Test URL'] - 1 });

			// Production is as it was: its memory still knows the run that ended (its save was lost meanwhile) and the one going on.
			trigger.savedStaticData = {};
			expect(await deliver(trigger, production('msg_both_urls'))).toMatchObject({ status: 200, items: undefined });
			expect((await deliver(trigger, production('msg_going_on'))).status).toBe(409);
			answerAfterRun(goingResponse, await trigger.runStartedBy(going.workflowData![0]));
			expect(await deliver(trigger, production('msg_going_on'))).toMatchObject({ status: 200, items: undefined });
		} finally {
			await new Promise((resolve) => service.close(resolve));
		}
	});
});

describe('Agency Inbox Trigger: queue mode (a webhook process accepts, a worker runs)', () => {
	const body = enveloped('chat.message.sent', payloads['chat.message.sent']);
	const retryOf = (id: string) => signedRequest(body, productionSecret, { id, at: new Date(Date.now() + 5_000) });

	/** One process's webhook(): the items of the run it starts and the response n8n answers it on. */
	const acceptIn = async (webhookProcess: TriggerWorkflow, id: string, request = signedRequest(body, productionSecret, { id })) => {
		const response = new RecordedResponse();
		const items = (await receive(webhookProcess, request, response)).workflowData![0];
		return { response, items, snapshot: persistedStaticData(webhookProcess) };
	};
	/** Lets a killed process's lease lapse: two slots of the shortened lease. */
	const leaseLapses = () => new Promise((resolve) => setTimeout(resolve, 2 * leaseTiming.slotMs + 50));

	it('runs a delivery again when its worker was killed (n8n answers 500, nothing saved), and not when its run failed', async () => {
		const webhookProcess = inAnotherProcess(triggerWith({}, secrets, {}, 'queue-killed-worker'));
		const killed = await acceptIn(webhookProcess, 'msg_worker_killed');
		const failed = await acceptIn(webhookProcess, 'msg_run_failed');
		const worker = inAnotherProcess(triggerWith({}, secrets, {}, 'queue-killed-worker'));
		expect(triggerOutput(await worker.runStartedBy(killed.items, 'webhook', { staticData: killed.snapshot }))).toHaveLength(1);
		// The second run fails in a node after the trigger: saved at its end, answered 500.
		const otherWorker = inAnotherProcess(triggerWith({}, secrets, {}, 'queue-killed-worker'));
		expect(triggerOutput(await otherWorker.runStartedBy(failed.items, 'webhook', { staticData: failed.snapshot }))).toHaveLength(1);
		webhookProcess.savedStaticData = otherWorker.savedStaticData;
		failed.response.writeHead(500).end();
		expect(await deliver(webhookProcess, retryOf('msg_run_failed'))).toMatchObject({ status: 200, items: undefined });

		// The first run's worker dies: its run saves nothing; n8n fails the job and answers 500.
		killProcess(worker);
		killed.response.writeHead(500).end();
		await leaseLapses();
		const again = await receive(webhookProcess, retryOf('msg_worker_killed'));
		// Another worker runs it: the first run's lease lapsed, so it claims the next attempt.
		const thirdWorker = inAnotherProcess(triggerWith({}, secrets, {}, 'queue-killed-worker'));
		expect(triggerOutput(await thirdWorker.runStartedBy(again.workflowData![0], 'webhook', { executionId: 'execution-7' }))).toEqual([expect.objectContaining({ deliveryId: 'msg_worker_killed' })]);
		// A Retry of the killed run's execution (where n8n kept its data) names the one that ran it again.
		const retried = await inAnotherProcess(triggerWith({}, secrets, {}, 'queue-killed-worker')).runStartedBy(killed.items, 'retry', { staticData: persistedStaticData(thirdWorker) });
		expect(triggerOutput(retried)).toEqual([expect.objectContaining({ deliveryId: 'msg_worker_killed', ranAgainIn: 'execution-7' })]);
	});

	it('decides a re-delivery from the store at any webhook process: while the run goes on in a live worker, the re-delivery\'s run fails (never a 200 without the effect); once that worker was killed, it runs once', async () => {
		const [first, second] = [1, 2].map(() => inAnotherProcess(triggerWith({}, secrets, {}, 'queue-two-webhook-processes')));
		const accepted = await acceptIn(first, 'msg_two_processes');
		const worker = inAnotherProcess(triggerWith({}, secrets, {}, 'queue-two-webhook-processes'));
		expect(triggerOutput(await worker.runStartedBy(accepted.items))).toHaveLength(1);
		// The service hung up on the first process; its retry reaches the second, which knows nothing of it.
		accepted.response.hangUp();
		const retried = await acceptIn(second, 'msg_two_processes', retryOf('msg_two_processes'));
		const otherWorker = inAnotherProcess(triggerWith({}, secrets, {}, 'queue-two-webhook-processes'));
		const refused = await otherWorker.runStartedBy(retried.items);
		expect(refused.data.resultData.error?.message).toContain('is being run by another execution in a live n8n process');
		expect(answerAfterRun(retried.response, refused)).toBe(500);

		// The first worker is killed in the middle of the run; the second webhook process restarts too.
		killProcess(worker);
		await leaseLapses();
		const restarted = inAnotherProcess(triggerWith({}, secrets, {}, 'queue-two-webhook-processes'));
		const third = await acceptIn(restarted, 'msg_two_processes', retryOf('msg_two_processes'));
		const run = await otherWorker.runStartedBy(third.items);
		expect(triggerOutput(run)).toEqual([expect.objectContaining({ deliveryId: 'msg_two_processes' })]);
		expect(answerAfterRun(third.response, run)).toBe(200);
		// A re-delivery where the static data lacks its id (another run's save overwrote it): the run's live
		// process holds the delivery for a while (5 minutes in n8n), so a run elsewhere fails, never a second effect.
		const fourth = await acceptIn(inAnotherProcess(triggerWith({}, secrets, {}, 'queue-two-webhook-processes')), 'msg_two_processes', retryOf('msg_two_processes'));
		const late = await inAnotherProcess(triggerWith({}, secrets, {}, 'queue-two-webhook-processes')).runStartedBy(fourth.items);
		expect(late.data.resultData.error?.message).toContain('is being run by another execution');
	});

	it('a run whose worker held it to the end of its hold counts as run: a re-delivery the static data lost stops at the trigger (200), once the hold ended', async () => {
		const webhookProcess = inAnotherProcess(triggerWith({}, secrets, {}, 'queue-held-through'));
		const accepted = await acceptIn(webhookProcess, 'msg_held_through');
		const worker = inAnotherProcess(triggerWith({}, secrets, {}, 'queue-held-through'));
		expect(triggerOutput(await worker.runStartedBy(accepted.items))).toHaveLength(1);
		// The worker lives on past the hold (3 s here); its mark stands before its lease lapses.
		await waitFor(async () => deduplicationStore().holdsAny(worker.workflow, worker.node, ['msg_held_through held through']), 'the hold ended and marked');
		await leaseLapses();
		const elsewhere = inAnotherProcess(triggerWith({}, secrets, {}, 'queue-held-through'));
		const retried = await acceptIn(elsewhere, 'msg_held_through', retryOf('msg_held_through'));
		const run = await inAnotherProcess(triggerWith({}, secrets, {}, 'queue-held-through')).runStartedBy(retried.items);
		expect({ error: run.data.resultData.error?.message, passed: triggerOutput(run) }).toEqual({ error: undefined, passed: [] });
	});

	it(`stops a delivery whose runs were cut ${MAX_ATTEMPTS} times, and says so`, async () => {
		const webhookProcess = inAnotherProcess(triggerWith({}, secrets, {}, 'queue-cut-often'));
		const accepted = await acceptIn(webhookProcess, 'msg_cut_often');
		// Each attempt claimed by a run whose worker died (its token there, its lease long lapsed).
		const claims = Array.from({ length: MAX_ATTEMPTS }, (_, attempt) => claimEntry('msg_cut_often', attempt));
		deduplicationStore().record('node', { workflow: webhookProcess.workflow, node: webhookProcess.node }, [...claims, ...claims.map((claim) => tokenEntry(claim, 'a-killed-worker'))]);
		const run = await inAnotherProcess(triggerWith({}, secrets, {}, 'queue-cut-often')).runStartedBy(accepted.items);
		expect(run.data.resultData.error?.message).toBe(`Delivery msg_cut_often was started by ${MAX_ATTEMPTS} runs whose n8n process stopped before they ended, so this run stops before the next node`);
		expect(triggerOutput(run)).toEqual([]);
	});

	it('lets the same execution through when n8n runs it again from its start (n8n 1.x re-runs a stalled job)', async () => {
		const webhookProcess = inAnotherProcess(triggerWith({}, secrets, {}, 'queue-same-execution'));
		const queued = (await receive(webhookProcess, signedRequest(body, productionSecret, { id: 'msg_same_execution' }))).workflowData![0];
		const firstWorker = inAnotherProcess(triggerWith({}, secrets, {}, 'queue-same-execution'));
		expect(triggerOutput(await firstWorker.runStartedBy(queued, 'webhook', { executionId: 'execution-77' }))).toHaveLength(1);
		const secondWorker = inAnotherProcess(triggerWith({}, secrets, {}, 'queue-same-execution'));
		expect(triggerOutput(await secondWorker.runStartedBy(queued, 'webhook', { executionId: 'execution-77' }))).toHaveLength(1);
		expect(triggerOutput(await inAnotherProcess(triggerWith({}, secrets, {}, 'queue-same-execution')).runStartedBy(queued, 'webhook', { executionId: 'execution-78' }))).toEqual([]);
	});

	it('runs a delivery once when two webhook processes accepted it and two workers run it at the same moment', async () => {
		const delivery = signedRequest(body, productionSecret, { id: 'msg_same_moment' });
		const queued = [];
		for (const webhookProcess of ['webhook-a', 'webhook-b']) queued.push((await receive(inAnotherProcess(triggerWith({}, secrets, {}, webhookProcess)), delivery)).workflowData![0]);
		const [firstWorker, secondWorker] = [1, 2].map(() => inAnotherProcess(triggerWith({}, secrets, {}, 'two-workers')));
		const outputs = await Promise.all([firstWorker.runStartedBy(queued[0]), secondWorker.runStartedBy(queued[1])]);
		expect(outputs.flatMap((run) => triggerOutput(run)).map((item) => item.deliveryId)).toEqual(['msg_same_moment']);
	});

	it('hands the webhook process\'s finished ids to each run, and writes them back on a no-run answer when a save lost them', async () => {
		const webhookProcess = inAnotherProcess(triggerWith({}, secrets, {}, 'queue-carried-ids'));
		const ids = ['msg_queue_1', 'msg_queue_2', 'msg_queue_3'];
		const worker = inAnotherProcess(triggerWith({}, secrets, {}, 'queue-carried-ids'));
		for (const id of ids) {
			const response = new RecordedResponse();
			const items = (await receive(webhookProcess, signedRequest(body, productionSecret, { id }), response)).workflowData![0];
			answerAfterRun(response, await worker.runStartedBy(items, 'webhook', { staticData: {} }));
		}
		// Each run loaded empty static data (queued before any ended); the last save still holds the first two, carried by its item.
		webhookProcess.savedStaticData = worker.savedStaticData;
		const restarted = inAnotherProcess(triggerWith({}, secrets, persistedStaticData(worker), 'queue-carried-ids'));
		for (const id of ids) expect(await deliver(restarted, retryOf(id))).toMatchObject({ status: 200, items: undefined });

		// A run on another worker, queued before these ended, overwrote the save: the webhook process puts them back.
		webhookProcess.savedStaticData = {};
		expect(await deliver(webhookProcess, retryOf('msg_queue_1'))).toMatchObject({ status: 200, items: undefined });
		const afterHeal = inAnotherProcess(triggerWith({}, secrets, persistedStaticData(webhookProcess), 'queue-carried-ids'));
		for (const id of ids) expect(await deliver(afterHeal, retryOf(id))).toMatchObject({ status: 200, items: undefined });
	});
});

describe('Agency Inbox Trigger: the claim of a run in another process', () => {
	const body = enveloped('chat.message.sent', payloads['chat.message.sent']);
	const store = deduplicationStore();
	/** Calls to n8n's deduplication store per workflow id. */
	const calls = new Map<string, number>();
	let release: (() => void) | undefined;
	let held: Promise<void> | undefined;
	/** Workflows whose store calls fail (n8n's database refuses them). */
	const failing = new Set<string>();

	beforeAll(() => {
		const record = store.checkProcessedAndRecord.bind(store);
		jest.spyOn(store, 'checkProcessedAndRecord').mockImplementation(async (items, scope, context, options) => {
			const workflowId = String(context.workflow.id);
			calls.set(workflowId, (calls.get(workflowId) ?? 0) + 1);
			if (failing.has(workflowId)) throw new Error('SQLITE_BUSY: database is locked');
			if (held) await held;
			return await record(items, scope, context, options);
		});
	});
	afterAll(() => jest.restoreAllMocks());

	it('a run in the process that accepted its delivery records once without waiting; a run in another process records, waits, reads back and records its lease', async () => {
		const oneProcess = triggerWith({}, secrets, {}, 'default-setup-calls');
		expect((await deliver(oneProcess, signedRequest(body, productionSecret, { id: 'msg_default_setup' }))).items).toHaveLength(1);
		expect(calls.get('default-setup-calls')).toBe(1);

		const accepted = await receive(inAnotherProcess(triggerWith({}, secrets, {}, 'queue-mode-calls')), signedRequest(body, productionSecret, { id: 'msg_queue_mode' }));
		const worker = inAnotherProcess(triggerWith({}, secrets, {}, 'queue-mode-calls'));
		expect(triggerOutput(await worker.runStartedBy(accepted.workflowData![0]))).toHaveLength(1);
		expect(calls.get('queue-mode-calls')).toBe(3);
	});

	it('fails a run whose claim n8n\'s database refused (n8n answers 500), and runs the delivery on the service\'s retry', async () => {
		const trigger = triggerWith({}, secrets, {}, 'claim-refused');
		const response = new RecordedResponse();
		const accepted = await receive(trigger, signedRequest(body, productionSecret, { id: 'msg_claim_refused' }), response);
		failing.add('claim-refused');
		const run = await trigger.runStartedBy(accepted.workflowData![0]);
		failing.delete('claim-refused');
		expect(run.data.resultData.error?.message).toContain('Could not record the start of the run for delivery msg_claim_refused');
		expect(answerAfterRun(response, run)).toBe(500);
		const retried = await deliver(trigger, signedRequest(body, productionSecret, { id: 'msg_claim_refused', at: new Date(Date.now() + 5_000) }));
		expect(retried).toMatchObject({ status: 200, items: [expect.objectContaining({ deliveryId: 'msg_claim_refused' })] });
	});

	it('a run on a worker fails when a live process holds its delivery, giving back the other delivery it claimed; a run whose holder died goes on', async () => {
		const webhookProcess = inAnotherProcess(triggerWith({}, secrets, {}, 'claimed-elsewhere'));
		const holder = inAnotherProcess(triggerWith({}, secrets, {}, 'claimed-elsewhere'));
		expect(triggerOutput(await holder.runStartedBy((await receive(webhookProcess, signedRequest(body, productionSecret, { id: 'msg_twice' }))).workflowData![0]))).toHaveLength(1);
		const queued = [];
		for (const id of ['msg_twice', 'msg_once']) queued.push(...(await receive(inAnotherProcess(triggerWith({}, secrets, {}, 'claimed-elsewhere')), signedRequest(body, productionSecret, { id }))).workflowData![0]);
		const worker = inAnotherProcess(triggerWith({}, secrets, {}, 'claimed-elsewhere'));
		const refused = await worker.runStartedBy(queued);
		expect(refused.data.resultData.error?.message).toContain('Delivery msg_twice is being run by another execution');
		killProcess(holder);
		await new Promise((resolve) => setTimeout(resolve, 2 * leaseTiming.slotMs + 50));
		const run = await worker.runStartedBy(queued);
		expect(triggerOutput(run).map((item) => item.deliveryId)).toEqual(['msg_twice', 'msg_once']);
	});

	it('the runs of a burst on one worker share calls to the store, and each delivery runs once', async () => {
		const webhookProcess = inAnotherProcess(triggerWith({}, secrets, {}, 'burst-shares-calls'));
		const ids = Array.from({ length: 20 }, (_, index) => `msg_shared_${index}`);
		const accepted: INodeExecutionData[][] = [];
		for (const id of ids) accepted.push((await receive(webhookProcess, signedRequest(body, productionSecret, { id }))).workflowData![0]);
		// Its leases are renewed after the test: the calls counted are the claims'.
		const renewMs = leaseTiming.renewMs;
		leaseTiming.renewMs = 60_000;
		const worker = inAnotherProcess(triggerWith({}, secrets, {}, 'burst-shares-calls'));
		leaseTiming.renewMs = renewMs;
		// The first call waits (a busy database) while the other runs start and queue behind it.
		held = new Promise((resolve) => (release = resolve));
		const runs = Promise.all(accepted.map(async (items) => triggerOutput(await worker.runStartedBy(items))));
		await new Promise((resolve) => setTimeout(resolve, 2_000));
		release!();
		held = undefined;
		expect((await runs).flat().map((item) => item.deliveryId).sort()).toEqual([...ids].sort());
		// Three calls per run unshared (a record, a read-back, the lease: 60); shared, at most two per run (how
		// many batches form depends on how fast the engine starts the runs, slower on a busy machine).
		expect(calls.get('burst-shares-calls')).toBeLessThanOrEqual(ids.length * 2);
	});
});

describe('Agency Inbox Trigger: memory', () => {
	const body = enveloped('chat.message.sent', payloads['chat.message.sent']);

	it('lets go of the finished ids this process keeps when its workflow is deactivated (static data keeps them); a run going on stays known', async () => {
		const trigger = triggerWith({}, secrets, {}, 'deactivated-workflow');
		expect((await deliver(trigger, signedRequest(body, productionSecret, { id: 'msg_ran' }))).items).toHaveLength(1);
		const goingResponse = new RecordedResponse();
		const going = await receive(trigger, signedRequest(body, productionSecret, { id: 'msg_going' }), goingResponse);

		const deactivation = new HookContext(trigger.workflow, trigger.node, trigger.additionalData, 'internal', 'update');
		expect(await new AgencyInboxTrigger().webhookMethods.default.delete.call(deactivation)).toBe(true);
		expect((await deliver(trigger, signedRequest(body, productionSecret, { id: 'msg_going' }))).status).toBe(409);
		expect((await deliver(trigger, signedRequest(body, productionSecret, { id: 'msg_ran' }))).items).toBeUndefined();
		answerAfterRun(goingResponse, await trigger.runStartedBy(going.workflowData![0]));
		expect((await deliver(trigger, signedRequest(body, productionSecret, { id: 'msg_going' }))).items).toBeUndefined();
	});

	/** 121,000 ids accepted within the last 11 hours, as the static data keeps them (8-character digests per hour). */
	const pastTheCap = (hourNow: number) => {
		const digit = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
		const digest = (index: number) => Array.from({ length: 8 }, (_, place) => digit[Math.floor(index / 64 ** place) % 64]).join('');
		const stored: Record<string, string> = {};
		for (let hour = 0; hour < 11; hour++) stored[String(hourNow - hour)] = Array.from({ length: 11_000 }, (_, index) => digest(hour * 11_000 + index)).join('');
		return stored;
	};

	it('beyond 120,000 ids within 19 hours a new delivery still runs, and its run carries a warning that re-deliveries may run again', async () => {
		const stored = pastTheCap(Math.floor(Date.now() / 3_600_000));
		const trigger = triggerWith({}, secrets, { 'node:Node Under Test': { acceptedDeliveries: stored } }, 'beyond-the-cap');
		const accepted = await receive(trigger, signedRequest(body, productionSecret, { id: 'msg_beyond_the_cap' }));
		const run = await trigger.runStartedBy(accepted.workflowData![0]);
		expect(triggerOutput(run).map((item) => item.deliveryId)).toEqual(['msg_beyond_the_cap']);
		const [hint] = (run.data.resultData.runData['Node Under Test'][0] as { hints?: Array<{ message: string }> }).hints ?? [];
		expect(hint?.message).toMatch(/more than 120,000 deliveries within 19 hours.*a re-delivery of one of them starts a second run/);
	});

	it("beyond 120,000 ids within 19 hours n8n's log says so once an hour, not once a delivery", async () => {
		const warn = jest.spyOn(Container.get(Logger), 'warn');
		try {
			const hourNow = Math.floor(Date.now() / 3_600_000);
			const stored = pastTheCap(hourNow);
			const trigger = triggerWith({}, secrets, { 'node:Node Under Test': { acceptedDeliveries: stored } }, 'beyond-the-cap-logged');
			for (const id of ['msg_logged_1', 'msg_logged_2', 'msg_logged_3']) await trigger.runStartedBy((await receive(trigger, signedRequest(body, productionSecret, { id }))).workflowData![0]);
			const forgotten = warn.mock.calls.filter(([message]) => /more than 120,000 deliveries within 19 hours/.test(String(message)));
			// Three deliveries within the hour (unless the hour turned between them): one line.
			expect(forgotten.length).toBe(Math.floor(Date.now() / 3_600_000) === hourNow ? 1 : 2);
		} finally {
			warn.mockRestore();
		}
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
