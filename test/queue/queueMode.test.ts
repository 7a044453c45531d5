/**
 * The package in n8n's queue mode (the pinned n8n): Postgres, Redis, one main, two workers and
 * webhook processes, started once for this file. Assertions read what reached the sandbox and
 * n8n's execution list; which worker ran each execution comes from the workers' logs.
 */
import path from 'node:path';

import { startSandbox, type Sandbox } from '../../sandbox';
import { NODE_TYPES, everyOperation, pollEverySeconds, sandboxCredential } from '../../scripts/n8n/agencyInbox';
import { ensureN8n, type CredentialToImport, type RunJson, type WorkflowToImport } from '../../scripts/n8n/harness';
import type { QueueProcess, QueueTopology } from '../../scripts/n8n/queue';
import { deliverAsTheService, signedDelivery } from '../../scripts/n8n/signedWebhook';
import { ALREADY_RUN, burstDeliveries, burstReplyWorkflow, eachTwiceShuffled, expectOneReplyEach, firstReplyTimes, notAnsweredAsRunOnce, notExactlyOnce, postBurst, repliesPerDelivery, retried } from '../e2e/bursts';
import { startRoundRobinBalancer } from './roundRobinBalancer';
import { SOAK, finishedExecutions, getJson, getN8nJson, listExecutions, postJson, sleep, waitFor, type ExecutionSummary } from '../e2e/support';
import { busiestMinute, type RequestLogEntry } from '../../sandbox/core';
import { SETUP_TIMEOUT_MS, WORKER_NAMES, credentialRef, crmNode, n8nVersion, nodeId, pollingToCrm, startQueueForTests, workersThatRan, type QueueForTests } from './support';

/** Credentials: the functional tests use an unlimited service; the budget tests a second sandbox at 20 per minute. */
const CREDENTIALS = {
	main: { id: 'qCredMain000001', name: 'Agency Inbox (queue tests)' },
	perProcess: { id: 'qCredPerProc001', name: 'Agency Inbox, 20 per minute, budget per process' },
	shared: { id: 'qCredShared0001', name: 'Agency Inbox, 20 per minute, shared by 2 processes' },
};
const WORKFLOWS = {
	operations: 'qOperations00001',
	webhookTrigger: 'qWebhookTrigger1',
	proposals: 'qProposalPoll001',
	returnAllPerProcess: 'qReturnAllProc01',
	returnAllShared: 'qReturnAllShar01',
	send: 'qSendMessage0001',
	burst: 'qBurstReplies001',
	cancel: 'qCancelBid000001',
};
const PATHS = { operations: 'q-operations', returnAllPerProcess: 'q-return-all-per-process', returnAllShared: 'q-return-all-shared', send: 'q-send', cancel: 'q-cancel' };
const TRIGGER_WEBHOOK_ID = '7c1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e51';
const BURST_WEBHOOK_ID = '7c1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e77';
const SENT_MESSAGE = 'Hello from the queue-mode test';
const RATE_LIMITED_PAGES = 15;
/** Webhook process restarts right behind 4 overlapping runs: 2 in CI, 5 in the weekly soak (each restart costs tens of CPU seconds). */
const RESTART_ROUNDS = SOAK ? 5 : 2;
/** The same delivery at two webhook processes at once: 10 trials in CI, 20 in the weekly soak (the run that loses fails after about 8 s). */
const SAME_MOMENT_TRIALS = SOAK ? 20 : 10;
/** What n8n answers a run that stopped because a live process runs the same delivery (the trigger's error, the service retries). */
const HELD_ELSEWHERE = 500;


/** A resource locator set by ID, as the editor saves it. */
const byId = (value: string) => ({ __rl: true, mode: 'id', value });

function webhookNode(webhookPath: string): object {
	const id = nodeId();
	return {
		id,
		name: 'Webhook',
		type: 'n8n-nodes-base.webhook',
		typeVersion: 2,
		position: [0, 0],
		webhookId: `9e00aaaa-0000-4000-8000-${webhookPath.length.toString().padStart(4, '0')}${id.slice(-8)}`,
		parameters: { httpMethod: 'POST', path: webhookPath, responseMode: 'onReceived', options: {} },
	};
}

/** n8n's Webhook node followed by Agency Inbox nodes (name → parameters), all on its output; any failing node fails the run. */
function webhookToActions(id: string, webhookPath: string, credential: { id: string; name: string }, nodes: Array<[string, Record<string, unknown>]>): WorkflowToImport {
	return {
		id,
		name: `Queue: ${webhookPath}`,
		nodes: [
			webhookNode(webhookPath),
			...nodes.map(([name, parameters], index) => ({
				id: nodeId(),
				name,
				type: NODE_TYPES.action,
				typeVersion: 1,
				position: [300, index * 120],
				parameters,
				credentials: credentialRef(credential),
			})),
		],
		connections: { Webhook: { main: [nodes.map(([name]) => ({ node: name, type: 'main', index: 0 }))] } },
		settings: { executionOrder: 'v1', timezone: 'Europe/Berlin' },
	};
}

const RETURN_ALL: Array<[string, Record<string, unknown>]> = [['Get All Proposals', { resource: 'proposal', operation: 'getAll', returnAll: true, filters: {}, simplify: true }]];

describe(`Agency Inbox in n8n ${n8nVersion} queue mode (Postgres, Redis, a main, 2 workers, webhook processes)`, () => {
	let sandbox: Sandbox;
	/** The service at 20 requests per minute per key, for the budget tests. */
	let limitedSandbox: Sandbox;
	let queue: QueueForTests | undefined;
	let topology: QueueTopology | undefined;
	const timings: Record<string, number> = {};
	const figures: Record<string, unknown> = {};

	const main = () => topology!.main.current;
	const executionsOf = async (workflowId: string) => finishedExecutions(await listExecutions(main().url, main().restHeaders, workflowId));
	const allExecutionsOf = (workflowId: string) => listExecutions(main().url, main().restHeaders, workflowId);
	/** Ends the answers the service holds (their worker was killed: they go nowhere), also where a test failed before. */
	const releaseHeld = async () => await postJson(`${sandbox.origin}/_sandbox/faults/release`, {});
	const sandboxGet = <T>(target: Sandbox, route: string) => getJson<{ data: T }>(`${target.origin}/_sandbox/${route}`).then((answer) => answer.data);
	const workerOf = (executions: ExecutionSummary[]) => workersThatRan(topology!, executions);
	const postWebhook = (webhookProcess: QueueProcess, webhookPath: string, body: object = {}) =>
		fetch(`${webhookProcess.current.url}/webhook/${webhookPath}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

	beforeAll(async () => {
		const startedAt = Date.now();
		// The service's retry schedule at 1/20 (0.25 s, 15 s, 90 s, 6 min, …), an answer waited for 60 s.
		sandbox = await startSandbox({ requestsPerMinute: 0, webhookTimeScale: 0.05, webhookAnswerTimeoutMs: 60_000 });
		limitedSandbox = await startSandbox({ requestsPerMinute: 20 });

		const room = sandbox.state.rooms[0];
		const scheduledBid = sandbox.state.bidIntents.find((intent) => intent.status === 'scheduled')!;
		const limited = (credential: { id: string; name: string }, apiKey: string, processesSharingKey: number): CredentialToImport => ({
			...credential,
			type: 'agencyInboxApi',
			data: { apiKey, baseUrl: limitedSandbox.url, requestsPerMinute: 20, processesSharingKey },
		});
		const credentials: CredentialToImport[] = [
			{ ...sandboxCredential(sandbox, 600), ...CREDENTIALS.main },
			limited(CREDENTIALS.perProcess, limitedSandbox.apiKeys[0], 1),
			limited(CREDENTIALS.shared, limitedSandbox.apiKeys[1], 2),
		];
		const workflows: WorkflowToImport[] = [
			webhookToActions(WORKFLOWS.operations, PATHS.operations, CREDENTIALS.main, everyOperation({ roomId: room.roomId, freelancerUid: room.vendorProposal!.userId, bidIntentId: scheduledBid.id, message: SENT_MESSAGE })),
			{
				id: WORKFLOWS.webhookTrigger,
				name: 'Queue: Agency Inbox Trigger',
				nodes: [
					{
						id: nodeId(),
						name: 'Agency Inbox Trigger',
						type: NODE_TYPES.trigger,
						typeVersion: 1,
						position: [0, 0],
						webhookId: TRIGGER_WEBHOOK_ID,
						parameters: { events: ['*'], options: {} },
						credentials: credentialRef(CREDENTIALS.main),
					},
					crmNode(sandbox.origin, "={{ JSON.stringify({ uid: 'delivery:' + $json.deliveryId, event: $json.event }) }}"),
				],
				connections: { 'Agency Inbox Trigger': { main: [[{ node: 'Post to CRM', type: 'main', index: 0 }]] } },
				settings: { executionOrder: 'v1' },
			},
			pollingToCrm({
				id: WORKFLOWS.proposals,
				name: 'Queue: Agency Inbox Proposal Trigger',
				trigger: { name: 'Proposal Changed', type: NODE_TYPES.proposalTrigger, parameters: { pollTimes: pollEverySeconds(3), triggerOn: 'both', simplify: true, filters: {} } },
				credential: CREDENTIALS.main,
				sandboxOrigin: sandbox.origin,
				row: "={{ JSON.stringify({ uid: 'proposal:' + $json.uid, updatedAt: $json.updatedAt }) }}",
			}),
			webhookToActions(WORKFLOWS.send, PATHS.send, CREDENTIALS.main, [
				['Send Message', { resource: 'message', operation: 'send', roomId: byId(room.roomId), freelancerUid: byId(room.vendorProposal!.userId), message: '={{ $json.body.text }}' }],
			]),
			webhookToActions(WORKFLOWS.cancel, PATHS.cancel, CREDENTIALS.main, [['Cancel Bid Intent', { resource: 'bidIntent', operation: 'cancel', bidIntentId: '={{ $json.body.bidIntentId }}' }]]),
			burstReplyWorkflow(WORKFLOWS.burst, BURST_WEBHOOK_ID, CREDENTIALS.main),
			webhookToActions(WORKFLOWS.returnAllPerProcess, PATHS.returnAllPerProcess, CREDENTIALS.perProcess, RETURN_ALL),
			webhookToActions(WORKFLOWS.returnAllShared, PATHS.returnAllShared, CREDENTIALS.shared, RETURN_ALL),
		];
		// The Return All workflows post how many records they got, once, to the rate-limited sandbox's CRM.
		for (const id of [WORKFLOWS.returnAllPerProcess, WORKFLOWS.returnAllShared]) {
			const workflow = workflows.find((candidate) => candidate.id === id)!;
			workflow.nodes.push(crmNode(limitedSandbox.origin, `={{ JSON.stringify({ uid: '${id}', records: $input.all().length }) }}`, true));
			(workflow.connections as Record<string, object>)['Get All Proposals'] = { main: [[{ node: 'Post to CRM', type: 'main', index: 0 }]] };
		}

		queue = await startQueueForTests('queue', {
			credentials,
			workflows,
			publish: workflows.map((workflow) => workflow.id),
			// One execution at a time per worker, so two runs queued together go to both workers.
			workerConcurrency: 1,
			env: { GENERIC_TIMEZONE: 'UTC', N8N_LOG_LEVEL: 'info' },
		});
		topology = queue.topology;
		timings['setup (build, Postgres, Redis, import, main, 2 workers, 1 webhook process)'] = Date.now() - startedAt;
	}, SETUP_TIMEOUT_MS);

	afterAll(async () => {
		await topology?.stop();
		queue?.removeWorkDir();
		await sandbox?.close();
		await limitedSandbox?.close();
		process.stderr.write(`queue timings (ms): ${JSON.stringify(timings)}\nqueue figures: ${JSON.stringify(figures, null, 1)}\n`);
	});

	it('runs every operation of the action node on a worker, started by a production webhook in the webhook process', async () => {
		const requestsBefore = (await sandboxGet<RequestLogEntry[]>(sandbox, 'requests')).length;
		const answer = await postWebhook(topology!.webhookProcesses[0], PATHS.operations);
		expect(answer.status).toBe(200);
		const [execution] = await waitFor('the operations run', () => executionsOf(WORKFLOWS.operations), (found) => found.length === 1);
		if (execution.status !== 'success') {
			const detail = (await getN8nJson<{ data: { data: string } }>(`${main().url}/rest/executions/${execution.id}`, main().restHeaders)).data;
			// n8n stores run data in the `flatted` format; n8n's own copy parses it.
			const flatted = require(require.resolve('flatted', { paths: [path.dirname((await ensureN8n(n8nVersion)).n8nBin)] })) as { parse(text: string): RunJson['data'] };
			const { resultData } = flatted.parse(detail.data);
			const nodeErrors = Object.entries(resultData.runData).map(([name, nodeRuns]) => `${name}: ${JSON.stringify((nodeRuns[0] as { error?: unknown }).error ?? 'ok').slice(0, 300)}`);
			throw new Error(`the operations run ended ${execution.status}: ${resultData.error?.message}\n${nodeErrors.join('\n')}`);
		}
		const [worker] = await workerOf([execution]);
		expect(WORKER_NAMES).toContain(worker);
		figures['operations run on'] = worker;

		const room = sandbox.state.rooms[0];
		// Without the Proposal Trigger's polls (from the main, with its own updatedSince).
		const isPoll = (request: RequestLogEntry) => request.query.updatedSince !== undefined && !request.query.updatedSince.startsWith('2026-05-01T00:00:00');
		const requests = (await sandboxGet<RequestLogEntry[]>(sandbox, 'requests')).slice(requestsBefore).filter((request) => !isPoll(request));
		expect(requests.filter((request) => request.status !== 200)).toEqual([]);
		const count = (line: string) => requests.filter((request) => `${request.method} ${request.path.replace(/^\/service/, '')}` === line).length;
		const membersPages = Math.ceil(sandbox.state.members.length / 20);
		expect({
			agency: count('GET /v1/agency'),
			members: count('GET /v1/agency/members'),
			invitations: count('GET /v1/agency/invitations'),
			proposals: count('GET /v1/agency/proposals'),
			proposal: count('GET /v1/agency/proposals/prop-0001'),
			rooms: count('GET /v1/master-inbox/rooms'),
			stories: count(`GET /v1/master-inbox/rooms/${room.roomId}/stories`),
			send: count(`POST /v1/master-inbox/rooms/${room.roomId}/stories`),
		}).toEqual({ agency: 1, members: membersPages, invitations: 1, proposals: 3, proposal: 1, rooms: 1, stories: 1, send: 1 });
		expect(requests.filter((request) => request.method === 'DELETE')).toHaveLength(1);
		expect(requests).toHaveLength(membersPages + 10);
		// The dateTime field was read in the workflow's time zone on the worker.
		expect(requests.find((request) => request.query.updatedSince)?.query.updatedSince).toMatch(/^2026-05-01T00:00:00(\.000)?\+02:00$/);
		const messages = await sandboxGet<Array<{ roomId: string; freelancerUid: string; message: string }>>(sandbox, 'messages');
		expect(messages.filter((message) => message.message === SENT_MESSAGE)).toEqual([expect.objectContaining({ roomId: room.roomId, freelancerUid: room.vendorProposal!.userId })]);
		const bid = (await sandboxGet<Array<{ id: string; status: string }>>(sandbox, 'bid-intents')).find((intent) => intent.status === 'cancelled');
		expect(bid).toBeDefined();
	});

	describe('bursts of deliveries at the webhook process, each starting the chat auto-reply', () => {
		const burstUrl = () => `${topology!.webhookProcesses[0].current.url}/webhook/${BURST_WEBHOOK_ID}/webhook`;

		it.each([
			[30, 100],
			[100, 30],
		])('a burst of %i deliveries posted %i ms apart: one run each that reaches its last node', async (count, spacingMs) => {
			const deliveries = burstDeliveries(sandbox, `queue_burst${count}`, count);
			const answers = await postBurst(burstUrl(), sandbox.signingSecret, deliveries, spacingMs);
			// Each delivery is answered once its run on a worker has ended (or, retried after a late answer, "already run").
			expect(notAnsweredAsRunOnce(answers)).toEqual([]);
		figures[`burst of ${count}: deliveries sent again after a non-200 answer`] = retried(answers);
			timings[`burst of ${count}: replies`] = await expectOneReplyEach(sandbox.origin, deliveries, 10 * 60_000);
		});

		it('the same burst with every id twice in a shuffled order: still one run each', async () => {
			const deliveries = burstDeliveries(sandbox, 'queue_twice', 30);
			const answers = await postBurst(burstUrl(), sandbox.signingSecret, eachTwiceShuffled(deliveries), 50);
			expect(answers.every((answer) => answer.status === 200)).toBe(true);
			await expectOneReplyEach(sandbox.origin, deliveries, 8 * 60_000);
		});
	});

	describe('webhook trigger in the webhook process', () => {
		const triggerUrl = (webhookProcess: QueueProcess) => `${webhookProcess.current.url}/webhook/${TRIGGER_WEBHOOK_ID}/webhook`;
		const deliveryData = (id: string) => ({ proposal: { uid: 'prop-0001' }, message: { text: id }, chat: { id: 'room-001' } });
		/** As the service delivers: again on its schedule (at 1/20) after an error, until a 200. */
		const deliver = async (webhookProcess: QueueProcess, id: string, type = 'chat.message.sent', secret = sandbox.signingSecret) => {
			const { status, body } = await deliverAsTheService(triggerUrl(webhookProcess), secret, type, deliveryData(id), id);
			return { status, message: body.message };
		};
		/** One attempt only: what the service hears first. */
		const deliverOnce = async (webhookProcess: QueueProcess, id: string) => {
			const request = signedDelivery(triggerUrl(webhookProcess), sandbox.signingSecret, 'chat.message.sent', deliveryData(id), id);
			const response = await fetch(triggerUrl(webhookProcess), { method: 'POST', headers: { 'content-type': 'application/json', ...request.headers }, body: request.body });
			return { status: response.status, message: ((await response.json().catch(() => ({}))) as { message?: string }).message };
		};
		const runs = () => executionsOf(WORKFLOWS.webhookTrigger);
		const crmRowsFor = async (id: string) => (await sandboxGet<Array<{ uid: string }>>(sandbox, 'crm')).filter((row) => row.uid === `delivery:${id}`).length;
		const kinds = ['proposal.accepted', 'chat.message.sent', 'bid_intent.scheduled', 'message.attempt.exhausted'];
		const firstIds = kinds.map((kind) => `msg_queue_${kind}`);

		it('starts one run per signed delivery of each event kind, on the workers; a forged one gets 401 and no run', async () => {
			const webhookProcess = topology!.webhookProcesses[0];
			const answers = await Promise.all(kinds.map((kind, index) => deliver(webhookProcess, firstIds[index], kind)));
			expect(answers).toEqual(kinds.map(() => ({ status: 200, message: undefined })));
			const forged = await deliver(webhookProcess, 'msg_queue_forged', 'chat.message.sent', `whsec_${Buffer.from('not the secret').toString('base64')}`);
			expect(forged.status).toBe(401);

			const found = await waitFor('4 runs', runs, (executions) => executions.length === 4);
			expect(found.map((execution) => execution.status)).toEqual(['success', 'success', 'success', 'success']);
			const workers = await workerOf(found);
			expect(workers.every((worker) => worker && WORKER_NAMES.includes(worker))).toBe(true);
			figures['trigger runs per worker'] = Object.fromEntries(WORKER_NAMES.map((name) => [name, workers.filter((worker) => worker === name).length]));
			for (const id of firstIds) expect(await crmRowsFor(id)).toBe(1);
			expect(await crmRowsFor('msg_queue_forged')).toBe(0);
		});

		it('starts no second run for a re-delivery 5 s later', async () => {
			await sleep(5_000);
			const later = await Promise.all(firstIds.map((id) => deliver(topology!.webhookProcesses[0], id)));
			expect(later).toEqual(firstIds.map(() => ({ status: 200, message: ALREADY_RUN })));
			await sleep(3_000);
			expect(await runs()).toHaveLength(4);
		});

		it('after the webhook process restarts, starts no second run for a delivery whose run has ended', async () => {
			const webhookProcess = topology!.webhookProcesses[0];
			const oneAtATime = kinds.map((kind) => `msg_queue_one_at_a_time_${kind}`);
			for (const [index, id] of oneAtATime.entries()) {
				expect(await deliver(webhookProcess, id, kinds[index])).toEqual({ status: 200, message: undefined });
				await waitFor(`the run of ${id}`, runs, (executions) => executions.length === 4 + index + 1);
			}
			const startedAt = Date.now();
			await webhookProcess.restart();
			timings['webhook process restart'] = Date.now() - startedAt;
			// The first four ran at the same moment on both workers; the later runs carried their ids.
			const answers = await Promise.all([...oneAtATime, ...firstIds].map((id) => deliver(webhookProcess, id)));
			expect(answers).toEqual([...oneAtATime, ...firstIds].map(() => ({ status: 200, message: ALREADY_RUN })));
			await sleep(3_000);
			expect(await runs()).toHaveLength(8);
		});

		it(`after restarts right behind runs that overlapped on two workers, a re-delivery never reaches the next node again (${RESTART_ROUNDS * 4} trials)`, async () => {
			const webhookProcess = topology!.webhookProcesses[0];
			let startedAgain = 0;
			const rows: Record<string, number> = {};
			for (let round = 1; round <= RESTART_ROUNDS; round++) {
				const overlapping = [1, 2, 3, 4].map((index) => `msg_queue_overlap_${round}_${index}`);
				const before = (await runs()).length;
				expect(await Promise.all(overlapping.map((id) => deliver(webhookProcess, id)))).toEqual(overlapping.map(() => ({ status: 200, message: undefined })));
				await waitFor('the 4 runs', runs, (executions) => finishedExecutions(executions).length === before + 4);
				await webhookProcess.restart();
				// "Already run", or (the static data lost its id: runs overlapping on two workers each saved without
				// the others') a run that fails at the trigger, its worker holding the delivery: never a 200 without a run.
				const answers = await Promise.all(overlapping.map((id) => deliverOnce(webhookProcess, id)));
				expect(answers.filter((answer) => !(answer.status === 200 && answer.message === ALREADY_RUN) && answer.status !== HELD_ELSEWHERE)).toEqual([]);
				startedAgain += answers.filter((answer) => answer.message !== ALREADY_RUN).length;
				await sleep(5_000);
				for (const id of overlapping) rows[id] = await crmRowsFor(id);
			}
			figures[`re-delivered after a restart right behind 4 overlapping runs, ${RESTART_ROUNDS} rounds`] = { runsStartedAgainAndFailedAtTheTrigger: `${startedAgain} of ${RESTART_ROUNDS * 4}`, reachedTheNextNodeAgain: Object.values(rows).filter((count) => count > 1).length };
			expect(Object.entries(rows).filter(([, count]) => count !== 1)).toEqual([]);
		});

		it(`with two webhook processes: one after the other, the second refuses; at the same moment, one run reaches the next node and the other's fails (${SAME_MOMENT_TRIALS} trials)`, async () => {
			const startedAt = Date.now();
			const second = await topology!.addWebhookProcess();
			timings['second webhook process start'] = Date.now() - startedAt;
			const [first] = topology!.webhookProcesses;
			const before = (await runs()).length;

			// One after the other, after the first run finished: the second process reads the id saved by that run.
			const sequential = ['msg_queue_sequential_1', 'msg_queue_sequential_2', 'msg_queue_sequential_3'];
			for (const id of sequential) {
				expect(await deliver(first, id)).toEqual({ status: 200, message: undefined });
				await waitFor(`the run of ${id}`, runs, (executions) => executions.length === before + sequential.indexOf(id) + 1);
				expect(await crmRowsFor(id)).toBe(1);
				expect(await deliver(second, id)).toEqual({ status: 200, message: ALREADY_RUN });
			}
			await sleep(3_000);
			expect((await runs()).length).toBe(before + sequential.length);

			// At the same moment, with both workers idle: both processes accept, each worker starts a run.
			const rows: Record<string, number> = {};
			let runsStarted = 0;
			const answered: Record<string, number> = {};
			for (let trial = 1; trial <= SAME_MOMENT_TRIALS; trial++) {
				const id = `msg_queue_together_${trial}`;
				const beforeTrial = (await runs()).length;
				const both = await Promise.all([deliverOnce(first, id), deliverOnce(second, id)]);
				// One 200 from the run that reached the next node; the other "already run" (200) or its run failed at the trigger.
				for (const answer of both) answered[answer.message === ALREADY_RUN ? 'already run' : String(answer.status)] = (answered[answer.message === ALREADY_RUN ? 'already run' : String(answer.status)] ?? 0) + 1;
				expect(both.filter((answer) => answer.status === 200 && answer.message !== ALREADY_RUN)).toHaveLength(1);
				expect(both.filter((answer) => answer.status !== 200 && answer.status !== HELD_ELSEWHERE)).toEqual([]);
				const accepted = both.filter((answer) => answer.message !== ALREADY_RUN).length;
				await waitFor(`the runs of ${id}`, runs, (executions) => executions.length >= beforeTrial + accepted);
				runsStarted += accepted;
				rows[id] = await crmRowsFor(id);
			}
			figures[`same delivery at two webhook processes at the same moment, ${SAME_MOMENT_TRIALS} trials`] = { runsStarted, answered, reachedTheNextNodeTwice: Object.values(rows).filter((count) => count > 1).length };
			expect(Object.entries(rows).filter(([, count]) => count !== 1)).toEqual([]);
		});
	});

	describe('a worker killed in the middle of a run the webhook trigger started', () => {
		/**
		 * Three chat deliveries registered at `url`, the first run's Get Proposal held by the service until the
		 * test releases it: once the other two have replied, that run is in its middle, however slow the
		 * machine. Its delivery, its execution and its worker.
		 */
		const threeDeliveriesOneHeld = async (url: string, prefix: string) => {
			await waitFor('no run of the burst workflow going on from earlier tests', () => allExecutionsOf(WORKFLOWS.burst), (executions) => finishedExecutions(executions).length === executions.length);
			const endpoint = await postJson<{ id: string }>(`${sandbox.origin}/_sandbox/webhook-endpoints`, { url });
			const deliveries = burstDeliveries(sandbox, prefix, 3);
			const before = (await allExecutionsOf(WORKFLOWS.burst)).length;
			await postJson(`${sandbox.origin}/_sandbox/faults`, { kind: 'hold', method: 'GET', pathPrefix: '/v1/agency/proposals/', holdMs: 600_000 });
			for (const delivery of deliveries) {
				const data = { proposal: { uid: delivery.proposalUid }, chat: { id: delivery.roomId }, message: { text: 'Are you available?' } };
				delivery.deliveryId = (await postJson<{ messageId: string }>(`${sandbox.origin}/_sandbox/events`, { type: 'chat.message.sent', data, endpointId: endpoint.id })).messageId;
			}
			const repliedFirst = await waitFor('the other two replies', () => repliesPerDelivery(sandbox.origin), (counts) => deliveries.filter((delivery) => counts.has(delivery.deliveryId)).length >= 2);
			const unreplied = deliveries.filter((delivery) => !repliedFirst.has(delivery.deliveryId));
			expect({ unrepliedWhileOneIsHeld: unreplied.length }).toEqual({ unrepliedWhileOneIsHeld: 1 });
			const newRuns = async () => (await allExecutionsOf(WORKFLOWS.burst)).slice(0, -before || undefined);
			const held = await waitFor('the held run (the one new run still running)', async () => (await newRuns()).filter((execution) => execution.status === 'running'), (found) => found.length === 1);
			const workerName = await waitFor('the worker of the held run', async () => (await workerOf(held))[0], (name) => name !== undefined);
			return { deliveries, heldDelivery: unreplied[0], held, worker: topology!.workers.find((candidate) => candidate.name === workerName)! };
		};
		afterEach(releaseHeld);
		/** What the service recorded of each attempt of one delivery. */
		const attemptsOf = async (deliveryId: string) => (await sandboxGet<Array<{ messageId: string; status?: number; error?: string; at: string }>>(sandbox, 'deliveries')).filter((attempt) => attempt.messageId === deliveryId);
		/**
		 * The attempts of the cut delivery once one was answered 200, and how many 200s came before its reply
		 * was stored. The attempt whose run had the effect may outlast the service's wait for an answer (it
		 * then records no status), and the 200 comes with its next retry, up to 6 minutes later at this scale.
		 */
		const attemptsUntil200 = async (deliveryId: string) => {
			const attempts = await waitFor(`an attempt of delivery ${deliveryId} answered 200`, () => attemptsOf(deliveryId), (found) => found.some((attempt) => attempt.status === 200), 10 * 60_000);
			const repliedAt = (await firstReplyTimes(sandbox.origin)).get(deliveryId)!;
			return { attempts, answered200BeforeItsEffect: attempts.filter((attempt) => attempt.status === 200 && Date.parse(attempt.at) < repliedAt).length };
		};

		it('the webhook process answers it only when n8n fails the stalled job; the service\'s retry runs it again: each delivery has its effect once', async () => {
			const webhookProcess = topology!.webhookProcesses[0];
			const { deliveries, heldDelivery, held, worker } = await threeDeliveriesOneHeld(`${webhookProcess.current.url}/webhook/${BURST_WEBHOOK_ID}/webhook`, 'queue_killed');
			const killedAt = Date.now();
			await worker.current.kill();
			await releaseHeld();
			await worker.restart();
			await waitFor('a reply to each delivery', () => repliesPerDelivery(sandbox.origin), (counts) => deliveries.every((delivery) => counts.has(delivery.deliveryId)), 8 * 60_000);
			timings['worker killed in a run: from the kill to the reply of its delivery'] = Date.now() - killedAt;
			await sleep(20_000);
			expect(notExactlyOnce(await repliesPerDelivery(sandbox.origin), deliveries)).toEqual({});
			const ended = (await allExecutionsOf(WORKFLOWS.burst)).find((execution) => execution.id === held[0].id);
			figures['the killed run'] = ended?.status;
			expect(ended?.status).not.toBe('success');
			// What the service saw of the cut delivery: no 200 before the run that had its effect, and the
			// re-deliveries meanwhile answered 409 (its run was taken for running until n8n gave the job up).
			const { attempts, answered200BeforeItsEffect } = await attemptsUntil200(heldDelivery.deliveryId);
			figures['the cut delivery, as the service saw each attempt'] = attempts.map((attempt) => attempt.status ?? attempt.error);
			expect({ answered200BeforeItsEffect, any409: attempts.some((attempt) => attempt.status === 409) }).toEqual({ answered200BeforeItsEffect: 0, any409: true });

			// The user's Retry of the killed run's execution: n8n replaced its data with the stalled job's error
			// (no items left to run), so the Retry ends at once with that error, and nothing runs again.
			const response = await fetch(`${main().url}/rest/executions/${held[0].id}/retry`, { method: 'POST', headers: main().restHeaders, body: JSON.stringify({ loadWorkflow: false }) });
			const retriedId = ((await response.json()) as { data: { id: string } }).data.id;
			const retried = await waitFor('the Retry ended', async () => (await allExecutionsOf(WORKFLOWS.burst)).find((execution) => execution.id === retriedId), (execution) => execution !== undefined && execution.status !== 'running' && execution.status !== 'new');
			const retriedData = JSON.stringify(await getN8nJson<unknown>(`${main().url}/rest/executions/${retriedId}`, main().restHeaders));
			figures['the Retry of the killed run'] = retried!.status;
			expect({ status: retried!.status, stalled: retriedData.includes('failed to be processed too many times') }).toEqual({ status: 'error', stalled: true });
			await sleep(5_000);
			expect((await repliesPerDelivery(sandbox.origin)).get(heldDelivery.deliveryId)).toBe(1);
		});

		it('behind a round-robin balancer over two webhook processes, the one that accepted it restarted after the kill: whichever process a retry reaches, each delivery has its effect once, and no 200 comes before it', async () => {
			if (topology!.webhookProcesses.length < 2) await topology!.addWebhookProcess();
			const balancer = await startRoundRobinBalancer(() => topology!.webhookProcesses.map((webhookProcess) => webhookProcess.current.url));
			try {
				const { deliveries, heldDelivery, worker } = await threeDeliveriesOneHeld(`${balancer.url}/webhook/${BURST_WEBHOOK_ID}/webhook`, 'queue_balanced_killed');
				const killedAt = Date.now();
				await worker.current.kill();
				await releaseHeld();
				// The webhook process that accepted the held delivery is restarted too (SIGTERM, as a rollout does).
				const acceptedBy = balancer.routes.find((route) => route.deliveryId === heldDelivery.deliveryId)!.upstream;
				await Promise.all([worker.restart(), topology!.webhookProcesses.find((webhookProcess) => webhookProcess.current.url === acceptedBy)!.restart()]);
				await waitFor('a reply to each delivery', () => repliesPerDelivery(sandbox.origin), (counts) => deliveries.every((delivery) => counts.has(delivery.deliveryId)), 8 * 60_000);
				timings['balanced: from the kill to the reply of the held delivery'] = Date.now() - killedAt;
				await sleep(20_000);
				expect(notExactlyOnce(await repliesPerDelivery(sandbox.origin), deliveries)).toEqual({});
				const { attempts, answered200BeforeItsEffect } = await attemptsUntil200(heldDelivery.deliveryId);
				const routes = balancer.routes.filter((route) => route.deliveryId === heldDelivery.deliveryId).map((route) => topology!.webhookProcesses.findIndex((webhookProcess) => webhookProcess.current.url === route.upstream) + 1);
				figures['balanced: the cut delivery, each attempt as the service saw it, and the webhook process it reached'] = attempts.map((attempt, index) => `${attempt.status ?? attempt.error} at webhook ${routes[index]}`);
				expect({ answered200BeforeItsEffect, reachedBoth: new Set(routes).size }).toEqual({ answered200BeforeItsEffect: 0, reachedBoth: 2 });
			} finally {
				await balancer.close();
			}
		});
	});

	describe('proposal trigger', () => {
		const crmRows = async () => (await sandboxGet<Array<{ uid: string; updatedAt: string }>>(sandbox, 'crm')).filter((row) => row.uid.startsWith('proposal:'));
		const pollRequests = async () => (await sandboxGet<RequestLogEntry[]>(sandbox, 'requests')).filter((request) => request.path.endsWith('/v1/agency/proposals') && request.query.updatedSince);

		it('polls in the main (also while every worker is stopped), runs on the workers, once per change and never without one', async () => {
			await waitFor('a poll', pollRequests, (requests) => requests.length > 0);
			const runsBefore = (await executionsOf(WORKFLOWS.proposals)).length;
			const rowsBefore = (await crmRows()).length;

			// Both workers frozen: polls go on (they run in the main), the change's run waits in the queue.
			const workerPids = topology!.workers.map((worker) => worker.current.pid);
			const pollsBefore = (await pollRequests()).length;
			for (const pid of workerPids) process.kill(pid, 'SIGSTOP');
			let changedWhileStopped: { uid: string; updatedAt: string };
			try {
				changedWhileStopped = (await postJson<{ data: { proposal: { uid: string; updatedAt: string } } }>(`${sandbox.origin}/_sandbox/changes`, { kind: 'clientReply', proposalUid: 'prop-0021' })).data.proposal;
				await sleep(7_000);
				expect((await pollRequests()).length).toBeGreaterThanOrEqual(pollsBefore + 2);
				expect((await crmRows()).length).toBe(rowsBefore);
			} finally {
				for (const pid of workerPids) process.kill(pid, 'SIGCONT');
			}
			const changes = [changedWhileStopped];
			for (const uid of ['prop-0022', 'prop-0023']) {
				await sleep(4_000);
				changes.push((await postJson<{ data: { proposal: { uid: string; updatedAt: string } } }>(`${sandbox.origin}/_sandbox/changes`, { kind: 'viewed', proposalUid: uid })).data.proposal);
			}
			await waitFor('the 3 changes in the CRM', crmRows, (rows) => rows.length >= rowsBefore + 3);
			// No change for 10 s: no run.
			await sleep(10_000);
			const rows = (await crmRows()).slice(rowsBefore);
			expect(rows.map((row) => `${row.uid} ${row.updatedAt}`).sort()).toEqual(changes.map((change) => `proposal:${change.uid} ${change.updatedAt}`).sort());
			const all = await executionsOf(WORKFLOWS.proposals);
			// Newest first: the runs since the first change.
			const executions = all.slice(0, all.length - runsBefore);
			expect(executions).toHaveLength(3);
			const workers = await workerOf(executions);
			expect(workers.every((worker) => worker && WORKER_NAMES.includes(worker))).toBe(true);
			figures['proposal runs per worker'] = workers;
		});
	});

	describe('request budget across two workers (the service at 20 requests per minute per key)', () => {
		const limitedRequests = async (apiKeyLabel: string) =>
			(await sandboxGet<RequestLogEntry[]>(limitedSandbox, 'requests')).filter((request) => request.apiKey === apiKeyLabel && request.path.endsWith('/v1/agency/proposals'));
		const crmRecordsOf = async (workflowId: string) => (await sandboxGet<Array<{ uid: string; records: number }>>(limitedSandbox, 'crm')).filter((row) => row.uid === workflowId);
		const expectedRecords = () => limitedSandbox.state.proposals.length;

		/** Two Return All runs at the same moment, one on each worker; what the service saw. */
		const twoReturnAlls = async (workflowId: string, webhookPath: string, apiKeyLabel: string) => {
			const startedAt = Date.now();
			const answers = await Promise.all([postWebhook(topology!.webhookProcesses[0], webhookPath), postWebhook(topology!.webhookProcesses[0], webhookPath)]);
			expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
			const executions = await waitFor(`both Return All runs of ${workflowId}`, () => executionsOf(workflowId), (found) => found.length === 2, 300_000);
			const wallMs = Date.now() - startedAt;
			const requests = await limitedRequests(apiKeyLabel);
			const pages = requests.filter((request) => request.status === 200).length;
			const result = {
				statuses: executions.map((execution) => execution.status),
				workers: await workerOf(executions),
				requests: requests.length,
				pagesAnswered: pages,
				answered429: requests.filter((request) => request.status === 429).length,
				maxPerRollingMinute: busiestMinute(requests),
				wallMs,
				// The least time a limiter allows for these pages at 20 per minute: (ceil(P/R) - 1) minutes.
				floorMs: (Math.ceil(pages / 20) - 1) * 60_000,
				crm: await crmRecordsOf(workflowId),
			};
			return result;
		};

		it('without a share per process: both workers run at once, the service answers some requests 429, the pipeline absorbs them', async () => {
			const result = await twoReturnAlls(WORKFLOWS.returnAllPerProcess, PATHS.returnAllPerProcess, 'key-1');
			figures['Return All x2, budget per process (Processes Sharing This Key = 1)'] = result;
			expect(result.statuses).toEqual(['success', 'success']);
			expect(new Set(result.workers)).toEqual(new Set(WORKER_NAMES));
			expect(result.crm.map((row) => row.records)).toEqual([expectedRecords(), expectedRecords()]);
			expect(result.pagesAnswered).toBe(2 * RATE_LIMITED_PAGES);
		});

		it('with Processes Sharing This Key = 2: at most 20 requests in any rolling minute and no 429', async () => {
			const result = await twoReturnAlls(WORKFLOWS.returnAllShared, PATHS.returnAllShared, 'key-2');
			figures['Return All x2, Processes Sharing This Key = 2'] = result;
			expect(result.statuses).toEqual(['success', 'success']);
			expect(new Set(result.workers)).toEqual(new Set(WORKER_NAMES));
			expect(result.crm.map((row) => row.records)).toEqual([expectedRecords(), expectedRecords()]);
			expect(result.answered429).toBe(0);
			expect(result.maxPerRollingMinute).toBeLessThanOrEqual(20);
		});
	});

	interface HeldWrite {
		/** What the run's webhook body carries: the message text, or the bid intent to cancel. */
		body: Record<string, string>;
		request: { method: string; path: string };
		/** How many times the service carried the write out. */
		timesDone: () => Promise<number>;
	}

	/** A write per test, each on its own target: a message text of its own, or a bid intent still scheduled. */
	const WRITES: Record<string, { workflow: string; path: string; write: (tag: string) => HeldWrite }> = {
		'Send Message': {
			workflow: WORKFLOWS.send,
			path: PATHS.send,
			write: (tag) => {
				const text = `Sent once, ${tag}`;
				return {
					body: { text },
					request: { method: 'POST', path: `/v1/master-inbox/rooms/${sandbox.state.rooms[0].roomId}/stories` },
					timesDone: async () => (await sandboxGet<Array<{ message: string }>>(sandbox, 'messages')).filter((message) => message.message === text).length,
				};
			},
		},
		'Cancel Bid Intent': {
			workflow: WORKFLOWS.cancel,
			path: PATHS.cancel,
			write: () => {
				const bidIntentId = sandbox.state.bidIntents.find((intent) => intent.status === 'scheduled')!.id;
				return {
					body: { bidIntentId },
					request: { method: 'DELETE', path: `/v1/bid-intents/${bidIntentId}` },
					timesDone: async () => ((await sandboxGet<Array<{ id: string; status: string }>>(sandbox, 'bid-intents')).find((intent) => intent.id === bidIntentId)?.status === 'cancelled' ? 1 : 0),
				};
			},
		},
	};

	describe.each(Object.keys(WRITES))('a worker restarted while %s waits for the service', (writeName) => {
		const { workflow, path: webhookPath, write } = WRITES[writeName];
		afterEach(releaseHeld);
		const requestsFor = async (held: HeldWrite, since: number) =>
			(await sandboxGet<RequestLogEntry[]>(sandbox, 'requests')).slice(since).filter((request) => request.method === held.request.method && request.path.endsWith(held.request.path));

		/** Starts the write with its answer held back; resolves once the service carried it out, with the worker running it. */
		const writeHeldBack = async (held: HeldWrite, holdMs: number) => {
			const executionsBefore = (await allExecutionsOf(workflow)).length;
			await postJson(`${sandbox.origin}/_sandbox/faults`, { kind: 'hold', method: held.request.method, pathPrefix: held.request.path, holdMs });
			expect((await postWebhook(topology!.webhookProcesses[0], webhookPath, held.body)).status).toBe(200);
			await waitFor(`the service to carry out ${writeName}`, held.timesDone, (count) => count === 1);
			const [execution] = await waitFor('the run', () => allExecutionsOf(workflow), (found) => found.length > executionsBefore);
			const workerName = await waitFor('the worker of the run', async () => (await workerOf([execution]))[0], (name) => name !== undefined);
			return { execution, worker: topology!.workers.find((candidate) => candidate.name === workerName)!, executionsBefore };
		};
		const endOf = (executionId: string) =>
			waitFor('the run to end', () => allExecutionsOf(workflow), (found) => finishedExecutions(found).some((execution) => execution.id === executionId), 240_000).then(
				(found) => found.find((execution) => execution.id === executionId)!,
			);

		it('SIGTERM: the worker finishes the write before it stops; carried out once, the run succeeds', async () => {
			const requestsBefore = (await sandboxGet<RequestLogEntry[]>(sandbox, 'requests')).length;
			const held = write('the worker stopped gracefully');
			const { execution, worker, executionsBefore } = await writeHeldBack(held, 5_000);
			await worker.restart();
			const ended = await endOf(execution.id);
			await sleep(5_000);
			figures[`${writeName}, worker SIGTERM while the answer was held 5 s`] = { status: ended.status, done: await held.timesDone() };
			expect(ended.status).toBe('success');
			expect(await held.timesDone()).toBe(1);
			expect(await requestsFor(held, requestsBefore)).toHaveLength(1);
			expect(await allExecutionsOf(workflow)).toHaveLength(executionsBefore + 1);
		});

		it('SIGKILL: the write stays carried out once, n8n does not run the execution again and reports it', async () => {
			const requestsBefore = (await sandboxGet<RequestLogEntry[]>(sandbox, 'requests')).length;
			const held = write('the worker was killed');
			const { execution, worker, executionsBefore } = await writeHeldBack(held, 600_000);
			const killedAt = Date.now();
			await worker.current.kill();
			await releaseHeld();
			await worker.restart();
			const ended = await endOf(execution.id);
			// Past n8n's stalled-job check (job lock 60 s, checked every 30 s): a job taken up again by
			// another worker would have sent by now.
			await sleep(Math.max(0, killedAt + 95_000 - Date.now()));
			figures[`${writeName}, worker SIGKILL while the answer was held`] = { status: ended.status, done: await held.timesDone(), executions: (await allExecutionsOf(workflow)).length - executionsBefore };
			expect(ended.status).not.toBe('success');
			expect(await held.timesDone()).toBe(1);
			expect(await requestsFor(held, requestsBefore)).toHaveLength(1);
			expect(await allExecutionsOf(workflow)).toHaveLength(executionsBefore + 1);
		});
	});

	describe('a worker restarted in the middle of a Return All', () => {
		it("leaves the run failed or finished as n8n reports it, never half-sent downstream, and sends nothing twice", async () => {
			const crmBefore = (await sandboxGet<Array<{ uid: string }>>(limitedSandbox, 'crm')).filter((row) => row.uid === WORKFLOWS.returnAllShared).length;
			const executionsBefore = (await allExecutionsOf(WORKFLOWS.returnAllShared)).length;
			const requestsBefore = (await sandboxGet<RequestLogEntry[]>(limitedSandbox, 'requests')).length;
			expect((await postWebhook(topology!.webhookProcesses[0], PATHS.returnAllShared)).status).toBe(200);
			const [running] = await waitFor('the run to start', () => allExecutionsOf(WORKFLOWS.returnAllShared), (found) => found.length > executionsBefore);
			const workerName = await waitFor('the worker of the run', async () => (await workerOf([running]))[0], (name) => name !== undefined);
			// A few pages in, the worker gets SIGTERM (n8n waits for running executions, up to its graceful shutdown timeout) and starts again.
			await waitFor('3 pages', async () => (await sandboxGet<RequestLogEntry[]>(limitedSandbox, 'requests')).length - requestsBefore, (count) => count >= 3);
			const worker = topology!.workers.find((candidate) => candidate.name === workerName)!;
			const restartAt = Date.now();
			await worker.restart();
			timings['worker restart in the middle of a Return All'] = Date.now() - restartAt;
			const [ended] = await waitFor('the run to end', () => allExecutionsOf(WORKFLOWS.returnAllShared), (found) => finishedExecutions(found).some((execution) => execution.id === running.id), 180_000);
			const final = (await allExecutionsOf(WORKFLOWS.returnAllShared)).find((execution) => execution.id === running.id)!;
			const rows = (await sandboxGet<Array<{ uid: string; records: number }>>(limitedSandbox, 'crm')).filter((row) => row.uid === WORKFLOWS.returnAllShared).slice(crmBefore);
			const requests = (await sandboxGet<RequestLogEntry[]>(limitedSandbox, 'requests')).slice(requestsBefore);
			figures['worker restart in a Return All'] = { status: final.status, ended: ended.id, rowsDownstream: rows, requests: requests.length, answered429: requests.filter((request) => request.status === 429).length };
			// Downstream got the whole result once, or nothing.
			if (final.status === 'success') expect(rows).toEqual([expect.objectContaining({ records: limitedSandbox.state.proposals.length })]);
			else expect(rows).toEqual([]);
			// Reads only: nothing was written to the service.
			expect(requests.filter((request) => request.method !== 'GET')).toEqual([]);
		});
	});
});
