/**
 * The package inside a real n8n (the pinned version, installed into the cache on first use):
 * every operation of the action node through `n8n execute`, then the sample workflows of
 * `workflows/` published in `n8n start`, fed by the sandbox's signed webhooks and polled changes.
 * Every assertion reads what reached the sandbox, not what n8n says about itself.
 */
import path from 'node:path';
import { startSandbox, type Sandbox } from '../../sandbox';
import {
	actionNodesWorkflow,
	buildPackage,
	everyOperation,
	installIntoN8n,
	loadSampleWorkflows,
	pollEverySeconds,
	registerWebhookEndpoints,
	sandboxCredential,
	triggerWebhooks,
	type TriggerWebhook,
} from '../../scripts/n8n/agencyInbox';
import { N8N_DEFAULT_EXPRESSION_ISOLATES, ensureN8n, executeWorkflow, fetchFromN8n, nodeOutputJson, startN8n, type ExecutionResult, type RunningN8n, type WorkflowToImport } from '../../scripts/n8n/harness';
import { SELECTED_N8N_VERSION } from '../../scripts/n8n/install';
import { deliverAsTheService } from '../../scripts/n8n/signedWebhook';
import { makeTempDir, removeTempDir } from '../../scripts/tempDirs';
import { finishedExecutions, getJson, listExecutions, postJson, sleep, startLossyRelay, waitFor, type LossyRelay } from './support';
import type { RequestLogEntry } from '../../sandbox/core';
import { proposalsOfRoom } from '../nodes/AgencyInboxMessageTrigger/roomProposalsHelpers';

const n8nVersion = SELECTED_N8N_VERSION;
const SETUP_TIMEOUT_MS = 30 * 60_000;
/** The e2e proposal trigger polls every 3 s instead of every minute. */
const E2E_POLL_TIMES = pollEverySeconds(3);
const WORKFLOW_IDS = { crm: 'aiSampleCrmFlow1', chat: 'aiSampleChatFlw1', chatPolling: 'aiSampleChatPoll', bid: 'aiSampleBidFlow1', operations: 'e2eOperations001' };

interface SentMessage {
	roomId: string;
	freelancerUid: string;
	message: string;
}
interface BidIntent {
	id: string;
	jobUid: string;
	status: string;
}

/** One action node per operation, all fed by one Manual Trigger; a failing one does not stop the others. */
function operationsWorkflow(sendRoomId: string, sendFreelancerUid: string, cancelBidId: string): WorkflowToImport {
	const operations = everyOperation({ roomId: sendRoomId, freelancerUid: sendFreelancerUid, bidIntentId: cancelBidId, message: 'Hello from the end-to-end test' });
	return actionNodesWorkflow({
		id: WORKFLOW_IDS.operations,
		name: 'E2E: every operation of the Agency Inbox node',
		nodes: operations,
		// A zone other than the machine's and n8n's default, to see dateTime fields converted.
		settings: { timezone: 'Europe/Berlin' },
	});
}

describe(`Agency Inbox in a real n8n ${n8nVersion}`, () => {
	let sandbox: Sandbox;
	let n8n: RunningN8n | undefined;
	let relay: LossyRelay | undefined;
	let workDir: string;
	let operationsRun: ExecutionResult;
	let webhooks: TriggerWebhook[];
	let cancelledBidId: string;
	let relayEndpointId: string;
	/** When n8n started: the polling auto-reply answers the client messages written from then on. */
	let n8nStartedAt: number;
	const timings: Record<string, number> = {};
	const sandboxGet = <T>(route: string) => getJson<{ data: T }>(`${sandbox.origin}/_sandbox/${route}`).then((answer) => answer.data);
	const change = <T>(body: object) => postJson<{ data: T }>(`${sandbox.origin}/_sandbox/changes`, body).then((answer) => answer.data);
	const chatWebhook = () => webhooks.find((webhook) => webhook.workflowId === WORKFLOW_IDS.chat)!;

	beforeAll(async () => {
		const startedAt = Date.now();
		const progress = (line: string) => process.stderr.write(`${line}\n`);
		const [buildMs] = await Promise.all([buildPackage(progress), ensureN8n(n8nVersion, progress)]);
		timings['build'] = buildMs;
		timings['build + install or locate n8n'] = Date.now() - startedAt;

		// Retries 2 s after a failed attempt (the service: 5 s), after the first run has finished.
		sandbox = await startSandbox({ requestsPerMinute: 0, webhookTimeScale: 0.4 });
		workDir = makeTempDir('e2e');
		const userFolder = path.join(workDir, 'user');
		const samples = await loadSampleWorkflows({ sandboxOrigin: sandbox.origin, pollTimes: E2E_POLL_TIMES });
		const room = sandbox.state.rooms[0];
		const scheduledBid = sandbox.state.bidIntents.find((intent) => intent.status === 'scheduled')!;
		cancelledBidId = scheduledBid.id;
		const operations = operationsWorkflow(room.roomId, room.vendorProposal!.userId, cancelledBidId);

		let stepAt = Date.now();
		await installIntoN8n({
			userFolder,
			n8nVersion,
			credentials: [sandboxCredential(sandbox, 600)],
			workflows: [...samples, operations],
			publish: samples.map((workflow) => workflow.id),
		});
		timings['install package, import, publish'] = Date.now() - stepAt;

		stepAt = Date.now();
		operationsRun = await executeWorkflow(userFolder, operations.id);
		timings['n8n execute (all operations)'] = Date.now() - stepAt;

		stepAt = Date.now();
		n8nStartedAt = stepAt;
		// n8n's defaults, as users run it (the other suites take expression isolates lazily).
		n8n = await startN8n({ userFolder, env: { GENERIC_TIMEZONE: 'UTC', ...N8N_DEFAULT_EXPRESSION_ISOLATES } });
		timings['n8n start until workflows active'] = Date.now() - stepAt;

		webhooks = await triggerWebhooks(n8n.url, samples);
		// The chat trigger is reached through a relay that loses n8n's first answer to every delivery.
		relay = await startLossyRelay(chatWebhook().productionUrl);
		const directUrls = webhooks.filter((webhook) => webhook.workflowId !== WORKFLOW_IDS.chat).map((webhook) => webhook.productionUrl);
		[{ id: relayEndpointId }] = await registerWebhookEndpoints(sandbox.origin, [relay.url, ...directUrls]);
		timings['setup total'] = Date.now() - startedAt;
	}, SETUP_TIMEOUT_MS);

	afterAll(async () => {
		await n8n?.stop();
		await relay?.close();
		await sandbox?.close();
		if (workDir) removeTempDir(workDir);
		process.stderr.write(`e2e timings (ms): ${JSON.stringify(timings)}\n`);
	});

	describe('every operation of the action node (n8n execute)', () => {
		const outputOf = (nodeName: string) => nodeOutputJson(operationsRun.run, nodeName);
		const requests = () => sandboxGet<RequestLogEntry[]>('requests');

		it('runs without a node error', () => {
			const failed = Object.entries(operationsRun.run.data.resultData.runData)
				.filter(([, runs]) => runs.some((run) => run.data?.main[0]?.some((item) => 'error' in item.json)))
				.map(([name]) => `${name}: ${JSON.stringify(outputOf(name)[0])}`);
			expect(failed).toEqual([]);
			expect(operationsRun.succeeded).toBe(true);
		});

		it('reads the agency, members, invitations, proposals, rooms and messages', async () => {
			expect(outputOf('Get Agency')[0]).toMatchObject({ uid: 'agency-001' });
			expect(outputOf('Get Many Members').length).toBe(sandbox.state.members.length);
			const invitationStatuses = outputOf('Get Pending Invitations').map((invitation) => JSON.stringify(invitation).match(/"status":"(\w+)"/)?.[1]);
			expect(invitationStatuses.length).toBeGreaterThan(0);
			// The filter value is lowercase; the service answers with uppercase statuses.
			expect(new Set(invitationStatuses.map((status) => status?.toLowerCase()))).toEqual(new Set(['pending']));
			const proposals = outputOf('Get Many Proposals');
			expect(proposals.length).toBe(30);
			expect(new Set(proposals.map((proposal) => proposal.uid)).size).toBe(30);
			expect(outputOf('Get Updated Proposals').length).toBe(5);
			expect(JSON.stringify(outputOf('Get Proposal')[0])).toContain('prop-0001');
			expect(outputOf('Get Chat Rooms').length).toBe(5);
			expect(outputOf('Get Room Messages').length).toBeGreaterThan(0);

			const seen = (await requests()).filter((request) => request.status === 200).map((request) => `${request.method} ${request.path}`);
			for (const expected of [
				'GET /v1/agency',
				'GET /v1/agency/members',
				'GET /v1/agency/invitations',
				'GET /v1/agency/proposals',
				'GET /v1/agency/proposals/prop-0001',
				'GET /v1/master-inbox/rooms',
				`GET /v1/master-inbox/rooms/${sandbox.state.rooms[0].roomId}/stories`,
			]) {
				expect(seen.map((line) => line.replace(/^(\S+ )\/service/, '$1'))).toContain(expected);
			}
			const updatedSince = (await requests()).find((request) => request.query.updatedSince);
			// The dateTime field is read in the workflow's time zone and sent with its offset.
			expect(updatedSince?.query.updatedSince).toMatch(/^2026-05-01T00:00:00(\.000)?\+02:00$/);
		});

		it('sends the message once and cancels the bid intent', async () => {
			const room = sandbox.state.rooms[0];
			const messages = await sandboxGet<SentMessage[]>('messages');
			expect(messages.filter((message) => message.message === 'Hello from the end-to-end test')).toEqual([
				expect.objectContaining({ roomId: room.roomId, freelancerUid: room.vendorProposal!.userId }),
			]);
			const cancelled = outputOf('Cancel Bid Intent')[0];
			expect(cancelled).toMatchObject({ success: true });
			expect((await sandboxGet<BidIntent[]>('bid-intents')).find((intent) => intent.id === cancelledBidId)?.status).toBe('cancelled');
		});
	});

	it('serves the output schemas the editor asks for before a node has run', async () => {
		const schema = async (pathAfterNode: string) => {
			const response = await fetchFromN8n(`${n8n!.url}/schemas/n8n-nodes-agency-inbox.${pathAfterNode}`);
			return { status: response.status, body: response.status === 200 ? ((await response.json()) as { type: string; properties: Record<string, unknown> }) : undefined };
		};
		const rooms = await schema('agencyInbox/1.0.0/chatRoom/getAll.json');
		expect(rooms.status).toBe(200);
		expect(Object.keys(rooms.body!.properties)).toEqual(expect.arrayContaining(['roomId', 'roomName', 'roomUsers', 'lastStoryAt']));
		const sent = await schema('agencyInbox/1.0.0/message/send.json');
		expect(Object.keys(sent.body!.properties)).toEqual(['storyId', 'userId', 'userName', 'userPhotoUrl', 'message', 'createdAt']);
	});

	describe('sample workflow: new and updated proposals to the CRM (polling trigger)', () => {
		it('posts each changed proposal to the CRM exactly once', async () => {
			// The first poll after activation only sets the starting point; wait for a real sweep.
			await waitFor(
				'the proposal trigger to poll',
				() => sandboxGet<RequestLogEntry[]>('requests'),
				(records) => records.some((record) => record.path.endsWith('/v1/agency/proposals') && record.query.updatedSince),
				30_000,
			);
			const replied = await change<{ proposal: { uid: string } }>({ kind: 'clientReply' });
			const hired = await change<{ proposal: { uid: string } }>({ kind: 'hire' });
			const created = await change<{ proposal: { uid: string } }>({ kind: 'newProposal' });
			const changed = [replied, hired, created].map((record) => record.proposal.uid);
			const inCrm = () => sandboxGet<Array<{ uid: string }>>('crm');
			await waitFor('the CRM to receive the changed proposals', inCrm, (rows) => changed.every((uid) => rows.some((row) => row.uid === uid)));
			// Several more polls cover the inclusive updatedSince boundary, which repeats the last rows.
			await sleep(5_000);
			const uids = (await inCrm()).map((row) => row.uid);
			expect(uids.sort()).toEqual([...new Set(changed)].sort());
		});
	});

	describe('sample workflow: auto-reply to client chat messages (webhook trigger)', () => {
		const replies = async (roomId: string) => (await sandboxGet<SentMessage[]>('messages')).filter((message) => message.roomId === roomId && message.message.startsWith('Thanks for your message'));

		type DeliveryRecord = { messageId: string; attempt: number; status?: number; endpointId: string };
		const relayDeliveries = async () => (await sandboxGet<DeliveryRecord[]>('deliveries')).filter((delivery) => delivery.endpointId === relayEndpointId);

		/**
		 * Sends client messages into the given rooms at once; each is delivered twice (n8n's first
		 * answer is lost on the way back, so the service retries), and the first one is replayed
		 * byte for byte after that. Resolves once all of that has happened.
		 */
		async function messagesDeliveredTwiceAndReplayed(roomIds: string[]): Promise<void> {
			const before = (await relayDeliveries()).length;
			await Promise.all(roomIds.map((roomId) => change({ kind: 'clientMessage', roomId })));
			for (const roomId of roomIds) await waitFor(`a reply in ${roomId}`, () => replies(roomId), (found) => found.length > 0);
			const deliveries = await waitFor(
				'the re-deliveries',
				async () => (await relayDeliveries()).slice(before),
				(found) => found.filter((delivery) => delivery.attempt === 2 && delivery.status === 200).length === roomIds.length,
			);
			expect(deliveries.filter((delivery) => delivery.attempt === 1).map((delivery) => delivery.status)).toEqual(roomIds.map(() => 502));
			const first = relay!.captured.find((captured) => captured.body.toString().includes(`"${roomIds[0]}"`))!;
			const replay = await fetchFromN8n(chatWebhook().productionUrl, { method: 'POST', headers: first.headers, body: first.body });
			expect(replay.status).toBe(200);
			// Time for any (wrong) second run to post its reply.
			await sleep(2_000);
		}

		/**
		 * One reply, sent as the freelancer of the proposal the event names (the sandbox's event carries
		 * the room's vendorProposal), whoever owns the room (the client, nobody, or another member), and
		 * without the client's name in it.
		 */
		async function expectOneReplyFromTheProposalsFreelancer(roomId: string): Promise<void> {
			const room = sandbox.state.rooms.find((candidate) => candidate.roomId === roomId)!;
			const proposal = sandbox.state.proposals.find((record) => record.proposal.uid === room.vendorProposal!.id)!;
			const found = await replies(roomId);
			expect({ roomId, replyFrom: found.map((reply) => reply.freelancerUid) }).toEqual({ roomId, replyFrom: [proposal.freelancer.uid] });
			const client = room.roomUsers.find((participant) => participant.role === 'client')!.user.name!;
			expect(found[0].message).not.toContain(client);
		}

		it('answers a client message once when the service re-delivers it', async () => {
			const roomId = sandbox.state.rooms[2].roomId;
			await messagesDeliveredTwiceAndReplayed([roomId]);
			await expectOneReplyFromTheProposalsFreelancer(roomId);
		});

		it('answers each of several simultaneous client messages once when the service re-delivers them', async () => {
			const roomIds = [sandbox.state.rooms[3].roomId, sandbox.state.rooms[4].roomId, sandbox.state.rooms[8].roomId];
			// Owned by the client, by nobody, and by an agency member who is not the proposal's freelancer.
			expect([3, 4, 8].map((i) => sandbox.state.rooms[i].owner?.role ?? null)).toEqual(['client', null, 'freelancer']);
			expect(sandbox.state.rooms[8].owner!.user.id).not.toBe(sandbox.state.rooms[8].vendorProposal!.userId);
			await messagesDeliveredTwiceAndReplayed(roomIds);
			for (const roomId of roomIds) await expectOneReplyFromTheProposalsFreelancer(roomId);
		});

		it('starts a run for a signed webhook into the production URL and none for a badly signed one', async () => {
			const url = chatWebhook().productionUrl;
			const [signedRoom, forgedRoom] = [sandbox.state.rooms[5].roomId, sandbox.state.rooms[6].roomId];
			const executionsBefore = (await listExecutions(n8n!.url, n8n!.restHeaders, WORKFLOW_IDS.chat)).length;
			const proposalOf = (roomId: string) => sandbox.state.rooms.find((room) => room.roomId === roomId)!.vendorProposal!.id;
			const event = (roomId: string) => ({ proposal: { uid: proposalOf(roomId) }, message: { text: 'Are you available?' }, chat: { id: roomId } });

			const forgedSecret = 'whsec_' + Buffer.from('not the signing secret').toString('base64');
			const forged = await deliverAsTheService(url, forgedSecret, 'chat.message.sent', event(forgedRoom), 'msg_e2e_forged');
			expect(forged.status).toBe(401);
			const unsigned = await fetchFromN8n(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'chat.message.sent', data: event(forgedRoom) }) });
			expect(unsigned.status).toBe(401);

			const signed = await deliverAsTheService(url, sandbox.signingSecret, 'chat.message.sent', event(signedRoom), 'msg_e2e_signed');
			expect(signed.status).toBe(200);
			await waitFor(`a reply in ${signedRoom}`, () => replies(signedRoom), (found) => found.length === 1);
			const executions = await waitFor(
				'the run to finish',
				() => listExecutions(n8n!.url, n8n!.restHeaders, WORKFLOW_IDS.chat),
				(found) => finishedExecutions(found).length === executionsBefore + 1,
			);
			expect(executions.length).toBe(executionsBefore + 1);
			expect(await replies(forgedRoom)).toEqual([]);
		});
	});

	describe('sample workflow: auto-reply to client chat messages (polling trigger)', () => {
		const POLLING_REPLY = 'Thanks for writing!';
		const pollingReplies = async () => (await sandboxGet<SentMessage[]>('messages')).filter((message) => message.message.startsWith(POLLING_REPLY));
		const repliesIn = async (roomId: string) => (await pollingReplies()).filter((reply) => reply.roomId === roomId);
		/**
		 * Whom the sample may reply as: the freelancer of the room's proposal, the most recently updated of
		 * those linked to the room once the trigger has read the proposal list through, before that the
		 * one the room names (the trigger's `room.replyAs`).
		 */
		const freelancersOfRoom = (roomId: string) => {
			const room = sandbox.state.rooms.find((candidate) => candidate.roomId === roomId)!;
			const named = sandbox.state.proposals.find((record) => record.proposal.uid === room.vendorProposal!.id)!.freelancer.uid;
			return [proposalsOfRoom(sandbox.state, roomId)[0]?.freelancer.uid, named];
		};
		/** Several polls (every 3 s here): time for a wrong second reply to arrive. */
		const settle = () => sleep(8_000);

		it("answers a client message once, as the freelancer of the room's proposal", async () => {
			const roomIds = [10, 11, 12].map((index) => sandbox.state.rooms[index].roomId);
			await Promise.all(roomIds.map((roomId) => change({ kind: 'clientMessage', roomId })));
			for (const roomId of roomIds) await waitFor(`a polling auto-reply in ${roomId}`, () => repliesIn(roomId), (found) => found.length > 0);
			await settle();
			for (const roomId of roomIds) {
				const replies = await repliesIn(roomId);
				expect(replies).toHaveLength(1);
				expect(freelancersOfRoom(roomId)).toContain(replies[0].freelancerUid);
			}
		});

		it('answers both of two client messages written into one room between two polls', async () => {
			const roomId = sandbox.state.rooms[13].roomId;
			// One change, two stories: both are written before the next poll, and the room list shows only the second.
			const written = await change<{ stories: unknown[] }>({ kind: 'clientMessage', roomId, count: 2 });
			expect(written.stories).toHaveLength(2);
			await waitFor(`two polling auto-replies in ${roomId}`, () => repliesIn(roomId), (found) => found.length >= 2);
			await settle();
			const replies = await repliesIn(roomId);
			expect(replies).toHaveLength(2);
			for (const reply of replies) expect(freelancersOfRoom(roomId)).toContain(reply.freelancerUid);
		});

		it("answers every client message written since n8n started once, and none of the samples' own replies", async () => {
			const members = new Set(sandbox.state.members.map((member) => member.uid));
			/** Room → client messages written since n8n started (the other samples' tests wrote some too). */
			const clientMessages: Record<string, number> = {};
			for (const [roomId, stories] of Object.entries(sandbox.state.stories)) {
				const count = stories.filter((story) => !members.has(story.userId) && Date.parse(story.createdAt) >= n8nStartedAt).length;
				if (count > 0) clientMessages[roomId] = count;
			}
			// The rooms of the two tests above and of the webhook auto-reply's, at least.
			expect(Object.keys(clientMessages).length).toBeGreaterThanOrEqual(8);
			const repliesByRoom = async () => {
				const byRoom: Record<string, number> = {};
				for (const reply of await pollingReplies()) byRoom[reply.roomId] = (byRoom[reply.roomId] ?? 0) + 1;
				return byRoom;
			};
			await waitFor('a polling auto-reply per client message', repliesByRoom, (byRoom) => Object.entries(clientMessages).every(([roomId, count]) => (byRoom[roomId] ?? 0) >= count));
			await settle();
			// Each reply (of this sample and of the webhook auto-reply) is a message in a room too: none started a run.
			const replies = await sandboxGet<SentMessage[]>('messages');
			expect(replies.filter((message) => message.message.startsWith('Thanks for your message')).length).toBeGreaterThan(0);
			expect(await repliesByRoom()).toEqual(clientMessages);
		});
	});

	describe('sample workflow: cancel scheduled bids a rule rejects (webhook trigger)', () => {
		const bidIntents = () => sandboxGet<BidIntent[]>('bid-intents');

		it('cancels a newly scheduled bid intent', async () => {
			const scheduled = await change<BidIntent>({ kind: 'scheduleBid' });
			expect(scheduled.status).toBe('scheduled');
			await waitFor(`${scheduled.id} to be cancelled`, bidIntents, (intents) => intents.find((intent) => intent.id === scheduled.id)?.status === 'cancelled');
		});

		it('leaves a bid on a job of the always-bid list scheduled', async () => {
			const kept = (await bidIntents()).filter((intent) => intent.status === 'scheduled').pop()!;
			const runsBefore = finishedExecutions(await listExecutions(n8n!.url, n8n!.restHeaders, WORKFLOW_IDS.bid)).length;
			await postJson(`${sandbox.origin}/_sandbox/events`, { type: 'bid_intent.scheduled', data: { jobUid: 'job-keep-001', bidId: kept.id } });
			await waitFor(
				'the bid workflow to run',
				() => listExecutions(n8n!.url, n8n!.restHeaders, WORKFLOW_IDS.bid),
				(found) => finishedExecutions(found).length > runsBefore,
			);
			expect((await bidIntents()).find((intent) => intent.id === kept.id)?.status).toBe('scheduled');
		});
	});
});
