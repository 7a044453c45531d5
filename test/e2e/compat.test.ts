/**
 * Workflows saved with 0.1.0 keep working: the frozen fixtures of test/compat/0.1.0/ (one workflow per
 * operation and per trigger, as n8n exported them, node typeVersion 1) run unchanged in a real n8n
 * against the sandbox. The action workflows run in one `n8n execute-batch`; the two trigger workflows
 * are published in one `n8n start`. Assertions read what reached the sandbox and what the nodes output.
 * Next to them, two workflows built here (the triggers added after 0.1.0, so no fixture of 0.1.0 holds
 * them) are published in the same `n8n start`: the Message Trigger and the Invitation Trigger (Trigger
 * On: both), each posting its items to the sandbox's CRM, to prove one run of the next node per new
 * client message and per new or changed invitation on every version of the ladder.
 * `npm run test:compat` runs this file in every n8n version of the compatibility ladder
 * (scripts/n8n/compatLadder.json), so it uses only what n8n 1.49.0 already has.
 *
 * The fixtures are never edited. A change that would make one of them fail belongs in a new node
 * version (README, "Upgrading"); the fixtures then still describe version 1.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { startSandbox, type Sandbox } from '../../sandbox';
import {
	NODE_TYPES,
	PACKAGE_NAME,
	REPO_ROOT,
	SAMPLE_CREDENTIAL,
	buildPackage,
	installIntoN8n,
	pollEverySeconds,
	registerWebhookEndpoints,
	sandboxCredential,
	triggerWebhooks,
	type WorkflowNode,
} from '../../scripts/n8n/agencyInbox';
import {
	N8N_DEFAULT_EXPRESSION_ISOLATES,
	ensureN8n,
	executeWorkflows,
	nodeOutputJson,
	startN8n,
	type BatchExecutionResult,
	type RunningN8n,
	type WorkflowToImport,
} from '../../scripts/n8n/harness';
import { SELECTED_N8N_VERSION } from '../../scripts/n8n/install';
import { TEST_RETRY_TIME_SCALE } from '../../scripts/n8n/signedWebhook';
import { makeTempDir, removeTempDir } from '../../scripts/tempDirs';
import { ALREADY_RUN, burstDeliveries, eachTwiceShuffled, postBurst } from './bursts';
import { finishedExecutions, getJson, getN8nJson, listExecutions, postJson, recordedOutput, sleep, waitFor } from './support';
import type { RequestLogEntry } from '../../sandbox/core';
import { proposalsOfRoom } from '../nodes/AgencyInboxMessageTrigger/roomProposalsHelpers';

const FIXTURES_DIR = path.join(REPO_ROOT, 'test', 'compat', '0.1.0');
/**
 * sha256 over the fixtures' names and bytes, in name order. Released fixtures are frozen: if this
 * fails, restore the files instead of updating the hash, and put the change in a new node version.
 */
const FIXTURES_SHA256 = '18dcba2393876fb0a65731c2de971d8bbafd738b1333489986a71df0ba1f64eb';
const SETUP_TIMEOUT_MS = 30 * 60_000;

const ACTION_FIXTURES = [
	'action-agency-get.json',
	'action-bidIntent-cancel.json',
	'action-chatRoom-getAll.json',
	'action-invitation-getAll.json',
	'action-member-getAll.json',
	'action-message-getAll.json',
	'action-message-send.json',
	'action-proposal-get.json',
	'action-proposal-getAll.json',
] as const;
const TRIGGER_FIXTURES = ['trigger-proposal.json', 'trigger-webhook.json'] as const;
type Fixture = (typeof ACTION_FIXTURES)[number] | (typeof TRIGGER_FIXTURES)[number];

/** The workflows of the polling triggers added after 0.1.0: built here, each trigger posting its items to the CRM. */
const MESSAGE_WORKFLOW_ID = 'compatMsgTrigger';
const INVITATION_WORKFLOW_ID = 'compatInvTrigger';
const MESSAGE_TRIGGER_NAME = 'New Client Message';
const INVITATION_TRIGGER_NAME = 'New or Changed Invitation';
/** The Agency Inbox Trigger posting each delivery to the CRM, for the burst of re-deliveries. */
const BURST_WORKFLOW_ID = 'compatBurstHook';
const BURST_WEBHOOK_ID = 'c0a70003-0000-4000-8000-00000000b001';
const BURST_TRIGGER_NAME = 'Chat Delivery';


/**
 * A trigger of this package (typeVersion 1) whose items an HTTP Request node posts to the sandbox's CRM,
 * one POST per item: the CRM's rows are the runs of the next node. Polling triggers poll every 3 s.
 */
function triggerToCrm(options: { id: string; nodeIdPrefix: string; name: string; triggerType: string; triggerName: string; parameters: Record<string, unknown>; crmUrl: string; webhookId?: string }): WorkflowToImport {
	const nodeId = (index: number) => `${options.nodeIdPrefix}-0000-4000-8000-${String(index).padStart(12, '0')}`;
	return {
		id: options.id,
		name: options.name,
		nodes: [
			{
				id: nodeId(1),
				name: options.triggerName,
				type: options.triggerType,
				typeVersion: 1,
				position: [0, 0],
				...(options.webhookId ? { webhookId: options.webhookId, parameters: options.parameters } : { parameters: { pollTimes: pollEverySeconds(3), ...options.parameters } }),
				credentials: { [SAMPLE_CREDENTIAL.type]: { id: SAMPLE_CREDENTIAL.id, name: SAMPLE_CREDENTIAL.name } },
			},
			{
				id: nodeId(2),
				name: 'Post to CRM',
				type: 'n8n-nodes-base.httpRequest',
				typeVersion: 4.2,
				position: [260, 0],
				parameters: { method: 'POST', url: options.crmUrl, sendBody: true, specifyBody: 'json', jsonBody: '={{ JSON.stringify($json) }}', options: {} },
			},
		],
		connections: { [options.triggerName]: { main: [[{ node: 'Post to CRM', type: 'main', index: 0 }]] } },
		settings: { executionOrder: 'v1' },
	};
}

async function loadFixtures(): Promise<{ workflows: Map<Fixture, WorkflowToImport>; sha256: string }> {
	const files = (await fs.readdir(FIXTURES_DIR)).filter((file) => file.endsWith('.json')).sort();
	const hash = createHash('sha256');
	const workflows = new Map<Fixture, WorkflowToImport>();
	for (const file of files) {
		const bytes = await fs.readFile(path.join(FIXTURES_DIR, file));
		hash.update(file).update('\0').update(bytes).update('\0');
		workflows.set(file as Fixture, JSON.parse(bytes.toString('utf8')));
	}
	return { workflows, sha256: hash.digest('hex') };
}

describe(`workflows saved with 0.1.0, unchanged, in a real n8n ${SELECTED_N8N_VERSION}`, () => {
	let sandbox: Sandbox | undefined;
	let n8n: RunningN8n | undefined;
	let workDir: string | undefined;
	let fixtures: Map<Fixture, WorkflowToImport>;
	let fixturesSha256: string;
	let batch: Map<string, BatchExecutionResult>;
	/** Sandbox requests made by the action workflows, before any trigger ran. */
	let actionRequests: RequestLogEntry[];
	let burstTriggerWorkflow: WorkflowToImport | undefined;
	const timings: Record<string, number> = {};
	const sandboxGet = <T>(route: string) => getJson<{ data: T }>(`${sandbox!.origin}/_sandbox/${route}`).then((answer) => answer.data);
	const workflowId = (fixture: Fixture) => fixtures.get(fixture)!.id;
	const agencyInboxNode = (fixture: Fixture) => (fixtures.get(fixture)!.nodes as WorkflowNode[]).find((node) => node.type.startsWith('n8n-nodes-agency-inbox.'))!;
	const outputOf = (fixture: Fixture) => {
		const result = batch.get(workflowId(fixture))!;
		if (!result.run) throw new Error(`${fixture} failed: ${result.error}`);
		return nodeOutputJson(result.run, agencyInboxNode(fixture).name);
	};
	/** The requests of the action workflows to one path (without the /service prefix). */
	const requestsTo = (method: string, apiPath: string) =>
		actionRequests.filter((request) => request.method === method && request.path.replace(/^\/service/, '') === apiPath);

	beforeAll(async () => {
		const startedAt = Date.now();
		const progress = (line: string) => process.stderr.write(`${line}\n`);
		({ workflows: fixtures, sha256: fixturesSha256 } = await loadFixtures());
		const [buildMs] = await Promise.all([buildPackage(progress), ensureN8n(SELECTED_N8N_VERSION, progress)]);
		timings['build'] = buildMs;

		sandbox = await startSandbox({ requestsPerMinute: 0, webhookTimeScale: TEST_RETRY_TIME_SCALE });
		workDir = makeTempDir('compat');
		const userFolder = path.join(workDir, 'user');

		// The only change: n8n's own poll times, so the proposal trigger polls every 3 s, not every minute.
		const proposalTrigger = structuredClone(fixtures.get('trigger-proposal.json')!);
		for (const node of proposalTrigger.nodes as WorkflowNode[]) {
			if (node.type === NODE_TYPES.proposalTrigger) node.parameters.pollTimes = pollEverySeconds(3);
		}
		const crmUrl = `${sandbox.origin}/_sandbox/crm`;
		const messageTrigger = triggerToCrm({
			id: MESSAGE_WORKFLOW_ID,
			nodeIdPrefix: 'c0a70001',
			name: 'Compat: client messages to the CRM',
			triggerType: NODE_TYPES.messageTrigger,
			triggerName: MESSAGE_TRIGGER_NAME,
			parameters: {},
			crmUrl,
		});
		const invitationTrigger = triggerToCrm({
			id: INVITATION_WORKFLOW_ID,
			nodeIdPrefix: 'c0a70002',
			name: 'Compat: new and changed invitations to the CRM',
			triggerType: NODE_TYPES.invitationTrigger,
			triggerName: INVITATION_TRIGGER_NAME,
			parameters: { triggerOn: 'both' },
			crmUrl,
		});
		burstTriggerWorkflow = triggerToCrm({
			id: BURST_WORKFLOW_ID,
			nodeIdPrefix: 'c0a70003',
			name: 'Compat: chat deliveries to the CRM',
			triggerType: NODE_TYPES.trigger,
			triggerName: BURST_TRIGGER_NAME,
			parameters: { events: ['chat.message.sent'], options: {} },
			crmUrl,
			webhookId: BURST_WEBHOOK_ID,
		});
		const workflows = [
			...ACTION_FIXTURES.map((fixture) => fixtures.get(fixture)!),
			fixtures.get('trigger-webhook.json')!,
			proposalTrigger,
			messageTrigger,
			invitationTrigger,
			burstTriggerWorkflow,
		];

		let stepAt = Date.now();
		await installIntoN8n({
			userFolder,
			n8nVersion: SELECTED_N8N_VERSION,
			credentials: [sandboxCredential(sandbox, 600)],
			workflows,
			publish: [...TRIGGER_FIXTURES.map(workflowId), MESSAGE_WORKFLOW_ID, INVITATION_WORKFLOW_ID, BURST_WORKFLOW_ID],
		});
		timings['install package, import, publish'] = Date.now() - stepAt;

		stepAt = Date.now();
		batch = await executeWorkflows(userFolder, ACTION_FIXTURES.map(workflowId));
		actionRequests = await sandboxGet<RequestLogEntry[]>('requests');
		timings['n8n execute-batch (9 workflows)'] = Date.now() - stepAt;

		stepAt = Date.now();
		// n8n's defaults, as users run it (the other suites take expression isolates lazily).
		n8n = await startN8n({ userFolder, env: { GENERIC_TIMEZONE: 'UTC', ...N8N_DEFAULT_EXPRESSION_ISOLATES } });
		timings['n8n start until triggers active'] = Date.now() - stepAt;
		timings['setup total'] = Date.now() - startedAt;
	}, SETUP_TIMEOUT_MS);

	afterAll(async () => {
		await n8n?.stop();
		await sandbox?.close();
		if (workDir) removeTempDir(workDir);
		process.stderr.write(`compat timings (ms): ${JSON.stringify(timings)}\n`);
	});

	it('has the frozen fixtures: one workflow per operation and per trigger, every Agency Inbox node at typeVersion 1', () => {
		expect([...fixtures.keys()].sort()).toEqual([...ACTION_FIXTURES, ...TRIGGER_FIXTURES].sort());
		for (const workflow of fixtures.values()) {
			for (const node of workflow.nodes as WorkflowNode[]) {
				if (node.type.startsWith('n8n-nodes-agency-inbox.')) expect({ workflow: workflow.name, typeVersion: node.typeVersion }).toEqual({ workflow: workflow.name, typeVersion: 1 });
			}
		}
		expect(fixturesSha256).toBe(FIXTURES_SHA256);
	});

	it('installs as a community package: n8n lists its five nodes and its credential and logs no error about it', async () => {
		const nodeTypes = await getN8nJson<Array<{ name: string }>>(`${n8n!.url}/types/nodes.json`, n8n!.restHeaders);
		const credentialTypes = await getN8nJson<Array<{ name: string }>>(`${n8n!.url}/types/credentials.json`, n8n!.restHeaders);
		expect(nodeTypes.map((type) => type.name)).toEqual(expect.arrayContaining(Object.values(NODE_TYPES)));
		expect(credentialTypes.map((type) => type.name)).toContain(SAMPLE_CREDENTIAL.type);
		// What `n8n start` printed: n8n logs a node that throws while it loads (naming its file), and goes on without it.
		const log = await fs.readFile(n8n!.logFile, 'utf8');
		const installedPackage = `${path.sep}nodes${path.sep}node_modules${path.sep}${PACKAGE_NAME}${path.sep}`;
		expect(log.split('\n').filter((line) => /error/i.test(line) && (line.includes(installedPackage) || line.includes(`${PACKAGE_NAME}.`)))).toEqual([]);
	});

	it('runs every action workflow without an error', () => {
		const failed = ACTION_FIXTURES.filter((fixture) => !batch.get(workflowId(fixture))?.run).map((fixture) => `${fixture}: ${batch.get(workflowId(fixture))?.error}`);
		expect(failed).toEqual([]);
	});

	it('Agency → Get', () => {
		expect(outputOf('action-agency-get.json')).toEqual([expect.objectContaining({ uid: sandbox!.state.agency.uid, name: sandbox!.state.agency.name })]);
		expect(requestsTo('GET', '/v1/agency').length).toBeGreaterThanOrEqual(1);
	});

	it('Member → Get Many: all business managers (Return All, Role filter)', () => {
		const managers = sandbox!.state.members.filter((member) => member.role === 'business_manager').map((member) => member.uid);
		expect(outputOf('action-member-getAll.json').map((member) => member.uid)).toEqual(managers);
		const requests = requestsTo('GET', '/v1/agency/members');
		expect(requests.length).toBeGreaterThan(0);
		expect(requests.every((request) => request.query.role === 'business_manager')).toBe(true);
	});

	it('Invitation → Get Many: 3 declined invitations (Limit, Status filter)', () => {
		const invitations = outputOf('action-invitation-getAll.json') as Array<{ invite: { status: string } }>;
		expect(invitations.map((invitation) => invitation.invite.status)).toEqual(['DECLINED', 'DECLINED', 'DECLINED']);
		expect(requestsTo('GET', '/v1/agency/invitations').map((request) => request.query.status)).toEqual(['declined']);
	});

	it('Proposal → Get: the full record of the proposal picked from the list (Simplify off by default)', () => {
		const [record] = outputOf('action-proposal-get.json') as Array<{ proposal: { uid: string }; job: { title: string } }>;
		expect(record.proposal.uid).toBe('prop-0002');
		// The full record, as the service holds it (not a simplified row).
		expect(record).toEqual(JSON.parse(JSON.stringify(sandbox!.state.proposals.find((proposal) => proposal.proposal.uid === 'prop-0002'))));
		expect(requestsTo('GET', '/v1/agency/proposals/prop-0002')).toHaveLength(1);
	});

	it('Proposal → Get Many (resource and operation by default): 50 simplified proposals (Limit by default) in 3 pages', () => {
		const proposals = outputOf('action-proposal-getAll.json');
		expect(proposals).toHaveLength(50);
		expect(new Set(proposals.map((proposal) => proposal.uid)).size).toBe(50);
		expect(proposals[0]).toEqual(expect.objectContaining({ uid: expect.any(String), status: expect.any(String), jobTitle: expect.any(String), chatRoomId: expect.any(String) }));
		expect(proposals[0]).not.toHaveProperty('job');
		// Pages of 20: the third page is the last one needed.
		expect(requestsTo('GET', '/v1/agency/proposals')).toHaveLength(3);
	});

	it('Chat Room → Get Many: 5 rooms, oldest first, 2 per page, client messages only', () => {
		expect(outputOf('action-chatRoom-getAll.json')).toHaveLength(5);
		const requests = requestsTo('GET', '/v1/master-inbox/rooms');
		expect(requests).toHaveLength(3);
		for (const request of requests) expect(request.query).toEqual(expect.objectContaining({ sort: 'date-asc', pageSize: '2', clientMessageOnly: 'true' }));
	});

	it('Message → Get Many: every message of the room given by ID (Return All)', () => {
		const stories = outputOf('action-message-getAll.json');
		// Newest first, as the service sends them.
		expect(stories.map((story) => story.storyId)).toEqual(sandbox!.state.stories['room-001'].map((story) => story.storyId).reverse());
		expect(requestsTo('GET', '/v1/master-inbox/rooms/room-001/stories').length).toBeGreaterThan(0);
	});

	it('Message → Send: the message reached the room once, from the freelancer picked from the list', async () => {
		const sent = (await sandboxGet<Array<{ roomId: string; freelancerUid: string; message: string }>>('messages')).filter(
			(message) => message.message === 'Thanks, we will reply within the hour.',
		);
		expect(sent).toEqual([expect.objectContaining({ roomId: 'room-002', freelancerUid: 'mem-002' })]);
		expect(outputOf('action-message-send.json')).toEqual([expect.objectContaining({ storyId: expect.any(String), message: 'Thanks, we will reply within the hour.' })]);
		expect(requestsTo('POST', '/v1/master-inbox/rooms/room-002/stories')).toHaveLength(1);
	});

	it('Bid Intent → Cancel (operation by default): the scheduled bid intent is cancelled', async () => {
		expect(outputOf('action-bidIntent-cancel.json')).toEqual([{ success: true }]);
		const intents = await sandboxGet<Array<{ id: string; status: string }>>('bid-intents');
		expect(intents.find((intent) => intent.id === 'bid-003')?.status).toBe('cancelled');
		expect(requestsTo('DELETE', '/v1/bid-intents/bid-003')).toHaveLength(1);
	});

	it('Agency Inbox Trigger (All Events by default): a signed delivery from the service starts one run', async () => {
		const id = workflowId('trigger-webhook.json');
		const [webhook] = await triggerWebhooks(n8n!.url, [fixtures.get('trigger-webhook.json')!]);
		const [{ id: endpointId }] = await registerWebhookEndpoints(sandbox!.origin, [webhook.productionUrl]);
		await postJson(`${sandbox!.origin}/_sandbox/events`, { type: 'proposal.accepted', data: { proposal: { uid: 'prop-0003' } } });
		const deliveries = await waitFor(
			'the delivery to be answered',
			async () => (await sandboxGet<Array<{ endpointId: string; status?: number }>>('deliveries')).filter((delivery) => delivery.endpointId === endpointId),
			(found) => found.some((delivery) => delivery.status === 200),
			120_000,
		);
		// Attempts before the 200 may only be n8n's 503 of a busy moment (its database ping), retried by the service.
		expect(deliveries.map((delivery) => delivery.status)).toEqual([...deliveries.slice(0, -1).map(() => 503), 200]);
		const executions = await waitFor('the run to finish', () => listExecutions(n8n!.url, n8n!.restHeaders, id), (found) => finishedExecutions(found).length > 0);
		expect(executions.map((execution) => execution.status)).toEqual(['success']);
		expect(await recordedOutput(n8n!, executions[0].id, agencyInboxNode('trigger-webhook.json').name)).toEqual([
			{ event: 'proposal.accepted', deliveryId: expect.any(String), timestamp: expect.any(String), payload: { proposal: { uid: 'prop-0003' } } },
		]);
	});

	/** What the sandbox's CRM received: one row per item that reached the HTTP Request node of a trigger workflow. */
	const crmRows = () => sandboxGet<Array<Record<string, unknown>>>('crm');
	const sandboxChange = async <T>(body: Record<string, unknown>) => (await postJson<{ data: T }>(`${sandbox!.origin}/_sandbox/changes`, body)).data;
	const pollsMatching = async (matches: (request: RequestLogEntry) => boolean) => (await sandboxGet<RequestLogEntry[]>('requests')).filter(matches);

	/** Every run of a workflow (once none is running any more), with the items its trigger output. */
	async function triggerRuns(id: string, triggerName: string): Promise<Array<{ status: string; items: Array<Record<string, unknown>> }>> {
		const executions = await waitFor(
			'every run to finish',
			() => listExecutions(n8n!.url, n8n!.restHeaders, id),
			(found) => finishedExecutions(found).length === found.length,
		);
		const runs = [];
		for (const execution of executions.reverse()) runs.push({ status: execution.status, items: await recordedOutput(n8n!, execution.id, triggerName) });
		return runs;
	}

	// The two tests of the triggers added after 0.1.0 run before the Proposal Trigger's test: its client
	// reply writes a client message into a room, which the Message Trigger would rightly count.

	it('Agency Inbox Message Trigger: nothing written before activation, then one run of the next node per new client message (2 in one room, 1 in another)', async () => {
		// The first poll after activation notes where the inbox stands; wait for polls after it.
		const isMessagePoll = (request: RequestLogEntry) => request.method === 'GET' && request.path.endsWith('/v1/master-inbox/rooms') && request.query.sort === 'date-desc';
		await waitFor('the message trigger to poll after its activation', () => pollsMatching(isMessagePoll), (polls) => polls.length >= 3);
		// Seeded rooms end with a client message: none of them is history to emit.
		expect(sandbox!.state.rooms.some((room) => room.lastStory !== null && !sandbox!.state.members.some((member) => member.uid === room.lastStory!.user?.id))).toBe(true);
		expect(await listExecutions(n8n!.url, n8n!.restHeaders, MESSAGE_WORKFLOW_ID)).toEqual([]);
		const messageRows = async () => (await crmRows()).filter((row) => row.event === 'chat.message.sent');
		expect(await messageRows()).toEqual([]);

		const [roomA, roomB] = sandbox!.state.rooms.filter((room) => room.vendorProposal !== null && room.roomId !== 'room-002');
		const twice = await sandboxChange<{ stories: Array<{ storyId: string }> }>({ kind: 'clientMessage', roomId: roomA.roomId, text: 'Two questions, first: can you start Monday?', count: 2 });
		const once = await sandboxChange<{ storyId: string }>({ kind: 'clientMessage', roomId: roomB.roomId, text: 'Please share your availability.' });
		const expected = [
			...twice.stories.map((story) => ({ storyId: story.storyId, roomId: roomA.roomId, text: 'Two questions, first: can you start Monday?' })),
			{ storyId: once.storyId, roomId: roomB.roomId, text: 'Please share your availability.' },
		];
		await waitFor('the CRM to receive the three messages', messageRows, (rows) => rows.length >= expected.length);
		// A few more polls: no message is emitted twice, none from before activation.
		await sleep(7_000);

		type MessageItem = { event: string; timestamp: string; payload: { proposal: { uid: string } | null; message: { text: string }; chat: { id: string } }; message: { storyId: string } };
		const asSeen = (item: Record<string, unknown>) => {
			const { payload, message } = item as unknown as MessageItem;
			return { storyId: message.storyId, roomId: payload.chat.id, text: payload.message.text };
		};
		const byStory = (a: { storyId: string }, b: { storyId: string }) => a.storyId.localeCompare(b.storyId);
		const rows = await messageRows();
		expect(rows.map(asSeen).sort(byStory)).toEqual([...expected].sort(byStory));
		// payload.proposal: a proposal linked to the message's room (its chatRoomId): the most recently
		// updated once the trigger has read the proposal list through, before that the one the room names.
		for (const row of rows) {
			const { payload } = row as unknown as MessageItem;
			const ofRoom = [proposalsOfRoom(sandbox!.state, payload.chat.id)[0]?.uid, sandbox!.state.rooms.find((room) => room.roomId === payload.chat.id)?.vendorProposal?.id];
			expect(ofRoom).toContain(payload.proposal?.uid);
		}

		const runs = await triggerRuns(MESSAGE_WORKFLOW_ID, MESSAGE_TRIGGER_NAME);
		// A poll starts one run with one item per message: 1 to 3 runs, as the polls fell, 3 items in all.
		expect(runs.map((run) => run.status)).toEqual(runs.map(() => 'success'));
		const items = runs.flatMap((run) => run.items);
		expect(items.map(asSeen).sort(byStory)).toEqual([...expected].sort(byStory));
		// Oldest first: the two messages of one room in the order they were written.
		const inRoomA = items.map(asSeen).filter((item) => item.roomId === roomA.roomId).map((item) => item.storyId);
		expect(inRoomA).toEqual(twice.stories.map((story) => story.storyId));
		for (const item of items) {
			expect(item).toEqual(
				expect.objectContaining({
					event: 'chat.message.sent',
					timestamp: expect.any(String),
					author: expect.objectContaining({ id: expect.any(String) }),
					room: expect.objectContaining({ id: (item as unknown as MessageItem).payload.chat.id }),
				}),
			);
		}
	});

	it('Agency Inbox Invitation Trigger (New and Changed Invitations): nothing listed before activation, then one run of the next node per new invitation and per status change', async () => {
		const isInvitationPoll = (request: RequestLogEntry) =>
			request.method === 'GET' && request.path.endsWith('/v1/agency/invitations') && request.query.pageSize === '100' && request.query.status === undefined;
		await waitFor('the invitation trigger to poll after its activation', () => pollsMatching(isInvitationPoll), (polls) => polls.length >= 3);
		expect(await listExecutions(n8n!.url, n8n!.restHeaders, INVITATION_WORKFLOW_ID)).toEqual([]);
		type InvitationItem = { trigger: string; previousStatus?: string; invite: { uid: string; status: string } };
		const invitationRows = async () => (await crmRows()).filter((row) => typeof row.trigger === 'string' && typeof row.invite === 'object') as unknown as InvitationItem[];
		expect(await invitationRows()).toEqual([]);

		// A pending invitation listed at activation, and a new one.
		const listed = sandbox!.state.invitations.find((invitation) => invitation.invite.status === 'PENDING')!.invite.uid;
		const created = (await sandboxChange<{ invite: { uid: string } }>({ kind: 'newInvitation' })).invite.uid;
		await waitFor('the CRM to receive the new invitation', invitationRows, (rows) => rows.some((row) => row.invite.uid === created));
		await sandboxChange({ kind: 'invitationStatus', invitationUid: created, status: 'accepted' });
		await sandboxChange({ kind: 'invitationStatus', invitationUid: listed, status: 'accepted' });
		await waitFor('the CRM to receive the two status changes', invitationRows, (rows) => rows.filter((row) => row.trigger === 'statusChanged').length >= 2);
		// A few more polls: nothing is emitted twice.
		await sleep(7_000);

		const asSeen = (item: InvitationItem) => `${item.trigger} ${item.invite.uid} ${item.previousStatus ?? '-'} → ${item.invite.status}`;
		const expected = [`new ${created} - → PENDING`, `statusChanged ${created} PENDING → ACCEPTED`, `statusChanged ${listed} PENDING → ACCEPTED`].sort();
		expect((await invitationRows()).map(asSeen).sort()).toEqual(expected);
		const runs = await triggerRuns(INVITATION_WORKFLOW_ID, INVITATION_TRIGGER_NAME);
		expect(runs.map((run) => run.status)).toEqual(runs.map(() => 'success'));
		expect(runs.flatMap((run) => run.items as unknown as InvitationItem[]).map(asSeen).sort()).toEqual(expected);
	});

	it('Agency Inbox Proposal Trigger (New and Updated, Simplify by default; Result Events filter): one run for a client reply, none for a view', async () => {
		const id = workflowId('trigger-proposal.json');
		// The first poll after activation only notes where to start.
		await waitFor(
			'the proposal trigger to poll',
			() => sandboxGet<RequestLogEntry[]>('requests'),
			(records) => records.some((record) => record.path.endsWith('/v1/agency/proposals') && record.query.updatedSince),
		);
		await postJson(`${sandbox!.origin}/_sandbox/changes`, { kind: 'viewed' });
		const { data: replied } = await postJson<{ data: { proposal: { uid: string } } }>(`${sandbox!.origin}/_sandbox/changes`, { kind: 'clientReply' });
		await waitFor('a run', () => listExecutions(n8n!.url, n8n!.restHeaders, id), (found) => finishedExecutions(found).length > 0);
		// A few more polls: the view stays filtered out and the reply is not emitted twice.
		await sleep(7_000);
		const executions = await listExecutions(n8n!.url, n8n!.restHeaders, id);
		expect(executions.map((execution) => execution.status)).toEqual(['success']);
		const items = await recordedOutput(n8n!, executions[0].id, agencyInboxNode('trigger-proposal.json').name);
		expect(items).toEqual([expect.objectContaining({ trigger: 'updated', resultEvent: 'CLIENT_REPLIED', uid: replied.proposal.uid, jobTitle: expect.any(String) })]);
		expect(items[0]).not.toHaveProperty('job');
	});

	it('Agency Inbox Trigger: a burst of 12 deliveries, each sent twice in a shuffled order at once, goes past the trigger once each', async () => {
		const deliveries = burstDeliveries(sandbox!, 'compat', 12);
		const [webhook] = await triggerWebhooks(n8n!.url, [burstTriggerWorkflow!]);
		const answers = await postBurst(webhook.productionUrl, sandbox!.signingSecret, eachTwiceShuffled(deliveries), 0);
		expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
		const ids = deliveries.map((delivery) => delivery.deliveryId).sort();
		const burstRows = async () => (await crmRows()).filter((row) => typeof row.deliveryId === 'string' && row.deliveryId.startsWith('msg_compat_'));
		await waitFor('every delivery in the CRM', burstRows, (rows) => rows.length >= ids.length);
		// Runs of a second copy that n8n started stop at the trigger: let every run finish first.
		const runs = await triggerRuns(BURST_WORKFLOW_ID, BURST_TRIGGER_NAME);
		expect(runs.map((run) => run.status)).toEqual(runs.map(() => 'success'));
		expect((await burstRows()).map((row) => row.deliveryId).sort()).toEqual(ids);
		expect(answers.filter((answer) => answer.message === ALREADY_RUN).length + runs.length).toBe(2 * ids.length);
	});
});
