/**
 * The three polling triggers and every shipped sample, as a user imports them, in one real n8n (the
 * pinned version, the packed package installed as a community package) against the sandbox under each
 * single reading of what the spec leaves open (SINGLE_READINGS), one reading at a time.
 *
 * For each reading the sandbox's variants are switched and its data reset (nothing is published then),
 * and a fresh set of workflows is published, so every activation happens under that reading: the
 * Message, Invitation (both) and Proposal triggers each posting one CRM row per item, and the samples
 * of workflows/ (the AI one with a scripted model), all polling every 3 s; pages hold 5 rows, so sweeps
 * span pages. Both fixed auto-replies and the AI reply are published together: their replies begin
 * differently, and each is an agency message the others' triggers must not answer. Then, in two waves:
 * client messages (two in one room at once, one in a room far down the list, one in a new room, one
 * written by a proposal's client reply), agency messages, new invitations and status changes, proposal
 * changes and a scheduled bid. After a settling wait the sandbox's records and n8n's executions must
 * show: each event once in the CRM from each workflow that records it, one reply per client message
 * from each auto-reply and none to a reply or an agency message, the bid cancelled once, and no failed
 * run but one its sample's sticky note announces.
 *
 * Last, the room order switched under running Message Triggers (lastStoryAt → createdAt → lastSyncedAt,
 * with the sandbox's background re-syncs → lastClientMessageAt → lastStoryAt), one trigger activated
 * before the first switch and one after each of the first two, in waves of client messages (far down
 * the list, two in one room, a new room, messages synced late): each trigger posts every client message
 * written after its activation once, and none before. Never timings; latencies are printed.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';

import { SINGLE_READINGS, startSandbox, type Sandbox } from '../../sandbox';
import type { RequestLogEntry } from '../../sandbox/core';
import type { ChatRoom, ProposalRecord, SentMessage } from '../../sandbox/types';
import {
	NODE_TYPES,
	SAMPLE_MODEL_CREDENTIAL,
	WORKFLOWS_DIR,
	buildPackage,
	installIntoN8n,
	loadSampleWorkflows,
	pollEverySeconds,
	registerWebhookEndpoints,
	sandboxCredential,
	triggerWebhooks,
	type WorkflowNode,
} from '../../scripts/n8n/agencyInbox';
import { N8N_WITHOUT_EDITOR, ensureN8n, publishOneByOne, setPublished, startN8n, unpublishWorkflow, type RunJson, type RunningN8n, type WorkflowToImport } from '../../scripts/n8n/harness';
import { SELECTED_N8N_VERSION } from '../../scripts/n8n/install';
import { makeTempDir, removeTempDir } from '../../scripts/tempDirs';
import { proposalsOfRoom } from '../nodes/AgencyInboxMessageTrigger/roomProposalsHelpers';
import { ArrivalWatcher, crmPollingWorkflow, latencySummary } from './pollingN8n';
import { draftingModel, replyAbout, startScriptedModel, type ScriptedModel } from './scriptedModel';
import { getJson, getN8nJson, listExecutions, postJson, sleep, waitFor, type ExecutionSummary } from './support';

const n8nVersion = SELECTED_N8N_VERSION;
const SETUP_TIMEOUT_MS = 30 * 60_000;
const READING_TIMEOUT_MS = 900_000;
/** How long each wave's events may take to arrive (late is acceptable; a loaded machine is slow: up to 290 s was seen at a load average of 20 to 30) before the test looks at what did. */
const ARRIVAL_TIMEOUT_MS = 300_000;
/** The last phase: five waves. */
const SWITCHED_ORDERS_TIMEOUT_MS = 1_800_000;
/** After everything arrived: three polls, time for a duplicate or a reply to a reply. */
const SETTLE_MS = 9_000;

const SAMPLES = { crm: 'aiSampleCrmFlow1', chat: 'aiSampleChatFlw1', chatPolling: 'aiSampleChatPoll', bid: 'aiSampleBidFlow1', ai: 'aiSampleAiReply1' } as const;
/** How each auto-reply's messages begin. */
const REPLY_OPENINGS = { polling: 'Thanks for writing!', webhook: 'Thanks for your message!', ai: replyAbout('').split('"')[0] } as const;
type Replier = keyof typeof REPLY_OPENINGS;

/** A failure a sample's sticky note announces: the node that fails, its HTTP codes, and the note's words. */
interface AnnouncedFailure {
	node: string;
	codes: string[];
	inNote: string;
}
const ANNOUNCED_FAILURES: Record<string, AnnouncedFailure[]> = {
	[SAMPLES.crm]: [],
	[SAMPLES.chat]: [
		{ node: 'Send Auto-Reply', codes: ['400', '403'], inNote: 'the run fails at *Send Auto-Reply* (400 or 403)' },
		{ node: 'Get Proposal', codes: ['404'], inNote: 'it fails at *Get Proposal* (404)' },
	],
	[SAMPLES.chatPolling]: [{ node: 'Send Auto-Reply', codes: ['403'], inNote: 'Send fails with 403' }],
	// The sandbox answers 400 to a cancel of an intent that is no longer scheduled.
	[SAMPLES.bid]: [{ node: 'Cancel Bid Intent', codes: ['404', '400'], inNote: 'Where it answers 404, or the intent is no longer scheduled, the run fails there' }],
	[SAMPLES.ai]: [{ node: 'Send Reply', codes: ['400', '403'], inNote: 'the run fails at *Send Reply* (400 or 403)' }],
};

/** The Message Triggers of the last phase, each posting one CRM row per item with its own `via`; the first order is the one the first is activated under. */
const SWITCHED_TRIGGERS = { swBefore: 'SwitchedMsg01', swAfterFirst: 'SwitchedMsg02', swAfterSecond: 'SwitchedMsg03' } as const;
const SWITCHED_ORDERS = ['lastStoryAt', 'createdAt', 'lastSyncedAt', 'lastClientMessageAt', 'lastStoryAt'] as const;

/** The test's own workflows, a trigger posting one CRM row per item, by what the row carries in `via` and their id's end. */
const TRIGGER_WORKFLOWS = { messages: 'MsgTrigToCrm', invitations: 'InvTrigToCrm', proposals: 'PrpTrigToCrm' } as const;
/** Each reading has its own copy of every workflow: a fresh activation, no state of an earlier reading. */
const workflowIdFor = (reading: number, suffix: string) => `rd${String(reading).padStart(2, '0')}${suffix.slice(-12)}`;

interface CrmRow {
	via?: keyof typeof TRIGGER_WORKFLOWS | keyof typeof SWITCHED_TRIGGERS;
	roomId?: string;
	storyId?: string;
	uid?: string;
	trigger?: string;
	status?: string;
	updatedAt?: string;
	/** The Message Trigger's payload.proposal.uid and notice. */
	proposalUid?: string | null;
	proposalNotice?: string | null;
}
const messageKey = (roomId: string, storyId: string) => `${roomId} ${storyId}`;
const invitationKey = (uid: string, trigger: string, status: string) => `${uid} ${trigger} ${status}`;
const proposalKey = (uid: string, updatedAt: string, trigger: string) => `${uid} ${updatedAt} ${trigger}`;

function readingWorkflows(reading: number, label: string, samples: WorkflowToImport[], sandboxOrigin: string): WorkflowToImport[] {
	type TriggerType = (typeof NODE_TYPES)[keyof typeof NODE_TYPES];
	const trigger = (via: keyof typeof TRIGGER_WORKFLOWS, name: string, type: TriggerType, parameters: Record<string, unknown>, row: string) =>
		crmPollingWorkflow({
			id: workflowIdFor(reading, TRIGGER_WORKFLOWS[via]),
			name: `Readings: one CRM row per ${name} (${label})`,
			trigger: { name, type, parameters },
			row: `{ via: '${via}', ${row} }`,
			sandboxOrigin,
		});
	return [
		trigger(
			'messages',
			'client message',
			NODE_TYPES.messageTrigger,
			{},
			'roomId: $json.payload.chat.id, storyId: $json.message.storyId, proposalUid: $json.payload.proposal?.uid ?? null, proposalNotice: $json.notice ?? null',
		),
		trigger('invitations', 'invitation change', NODE_TYPES.invitationTrigger, { triggerOn: 'both' }, 'uid: $json.invite.uid, trigger: $json.trigger, status: $json.invite.status'),
		trigger('proposals', 'proposal change', NODE_TYPES.proposalTrigger, { triggerOn: 'both' }, 'uid: $json.uid, updatedAt: $json.updatedAt, trigger: $json.trigger'),
		...samples.map((sample) => ({ ...structuredClone(sample), id: workflowIdFor(reading, sample.id), name: `${sample.name} (${label})` })),
	];
}

function switchedOrderWorkflows(sandboxOrigin: string): WorkflowToImport[] {
	return Object.entries(SWITCHED_TRIGGERS).map(([via, id]) =>
		crmPollingWorkflow({
			id,
			name: `Readings: the room order switched under it (${via})`,
			trigger: { name: 'client message', type: NODE_TYPES.messageTrigger, parameters: {} },
			row: `{ via: '${via}', roomId: $json.payload.chat.id, storyId: $json.message.storyId }`,
			sandboxOrigin,
		}),
	);
}

/** Expected against found, as multisets: what did not arrive, and what arrived beyond (a repeat included). */
function difference(expected: string[], found: string[]): { missing: string[]; extra: string[] } {
	const left = [...found];
	const missing: string[] = [];
	for (const key of expected) {
		const index = left.indexOf(key);
		if (index < 0) missing.push(key);
		else left.splice(index, 1);
	}
	return { missing: missing.sort(), extra: left.sort() };
}
const NONE = { missing: [], extra: [] };
/** How the sandbox's request log names the API key of n8n's credential (the test reads with the second key). */
const N8N_KEY = 'key-1';

/** CPU seconds a process has used (user and system, from /proc), a figure that does not depend on the machine's other load. */
async function cpuSecondsOf(pid: number): Promise<number> {
	const fields = (await fs.readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ');
	// utime and stime, fields 14 and 15 of stat (11 and 12 after the command), in clock ticks of 1/100 s.
	return (Number(fields[11]) + Number(fields[12])) / 100;
}
const cpuSecondsSince = (from: NodeJS.CpuUsage) => {
	const used = process.cpuUsage(from);
	return (used.user + used.system) / 1e6;
};

interface FailedRun {
	workflow: string;
	execution: string;
	node?: string;
	httpCode?: string;
	message?: string;
}

describe(`the polling triggers and the samples in a real n8n ${n8nVersion}, under each reading of the spec's open points`, () => {
	let sandbox: Sandbox;
	let model: ScriptedModel | undefined;
	let n8n: RunningN8n | undefined;
	let workDir: string | undefined;
	let samples: WorkflowToImport[];
	let flatted: { parse(text: string): RunJson['data'] };
	const sets: WorkflowToImport[][] = [];
	/** The workflows the running test published: unpublished after it, whether it passed, failed or timed out. */
	const publishedByTest = new Set<string>();

	const sandboxGet = <T>(route: string) => getJson<{ data: T }>(`${sandbox.origin}/_sandbox/${route}`).then((answer) => answer.data);
	const change = <T>(body: object) => postJson<{ data: T }>(`${sandbox.origin}/_sandbox/changes`, body).then((answer) => answer.data);

	beforeAll(async () => {
		const progress = (line: string) => process.stderr.write(`${line}\n`);
		const [, runtime] = await Promise.all([buildPackage(progress), ensureN8n(n8nVersion, progress)]);
		// n8n keeps a run's data in the `flatted` format; n8n's own copy parses it.
		flatted = require(require.resolve('flatted', { paths: [path.dirname(runtime.n8nBin)] }));
		sandbox = await startSandbox({ requestsPerMinute: 0, pageSize: 10, maxPageSize: 10 });
		model = await startScriptedModel(draftingModel);
		samples = await loadSampleWorkflows({ sandboxOrigin: sandbox.origin, pollTimes: pollEverySeconds(3), withChatModel: true });
		expect(samples.map((sample) => sample.id).sort()).toEqual(Object.values(SAMPLES).sort());
		for (const [index, { label }] of SINGLE_READINGS.entries()) sets.push(readingWorkflows(index, label, samples, sandbox.origin));
		workDir = makeTempDir('e2e-readings');
		const userFolder = path.join(workDir, 'n8n');
		await installIntoN8n({
			userFolder,
			n8nVersion,
			credentials: [sandboxCredential(sandbox, 10_000), { ...SAMPLE_MODEL_CREDENTIAL, data: model.credentialData }],
			workflows: [...sets.flat(), ...switchedOrderWorkflows(sandbox.origin)],
			publish: [],
		});
		n8n = await startN8n({ userFolder, env: { GENERIC_TIMEZONE: 'UTC', ...N8N_WITHOUT_EDITOR } });
		// Every set's webhook samples keep the samples' webhook ids: one production URL each, live while its set is published.
		await registerWebhookEndpoints(sandbox.origin, (await triggerWebhooks(n8n.url, samples)).map((webhook) => webhook.productionUrl));
	}, SETUP_TIMEOUT_MS);

	/** Publishes workflows for the running test (afterEach unpublishes them). */
	async function publishForTest(ids: string[]): Promise<void> {
		for (const id of ids) publishedByTest.add(id);
		await publishOneByOne(n8n!, ids);
	}

	/**
	 * A test leaves none of its workflows published, so the next one starts clean: where the editor's
	 * Unpublish did not finish (n8n's publication stalled on a busy machine), n8n's CLI unpublishes in
	 * the database and the running n8n follows at its next reconcile pass. Then the service goes quiet.
	 */
	afterEach(async () => {
		const ids = [...publishedByTest];
		publishedByTest.clear();
		const unpublished = await Promise.allSettled(ids.map((id) => setPublished(n8n!, id, false)));
		const stuck = ids.filter((_, index) => unpublished[index].status === 'rejected');
		if (stuck.length > 0) {
			process.stderr.write(`readings: the editor's Unpublish did not finish for ${stuck.join(', ')}; unpublishing with n8n's CLI\n`);
			for (const id of stuck) await unpublishWorkflow(path.join(workDir!, 'n8n'), id);
			await waitFor('the stuck workflows unpublished', async () => (await Promise.allSettled(stuck.map((id) => setPublished(n8n!, id, false)))).map((result) => result.status), (statuses) => statuses.every((status) => status === 'fulfilled'));
		}
		await untilQuiet();
	});

	afterAll(async () => {
		await n8n?.stop();
		await model?.close();
		await sandbox?.close();
		if (workDir) removeTempDir(workDir);
	});

	it('each failure the test allows a sample is one its sticky note announces', async () => {
		for (const [id, failures] of Object.entries(ANNOUNCED_FAILURES)) {
			const sample = samples.find((candidate) => candidate.id === id)!;
			const notes = (sample.nodes as WorkflowNode[])
				.filter((node) => node.type === 'n8n-nodes-base.stickyNote')
				.map((node) => String(node.parameters.content))
				.join('\n');
			for (const failure of failures) expect({ id, note: notes.includes(failure.inNote) }).toEqual({ id, note: true });
		}
		// Every sample is listed, the AI one included.
		expect((await fs.readdir(WORKFLOWS_DIR)).filter((file) => file.endsWith('.json')).length).toBe(Object.keys(ANNOUNCED_FAILURES).length);
	});

	/** The rooms as the service lists them now (newest first by its reading of "date"), read with the second API key. */
	async function roomsAsListed(): Promise<string[]> {
		const ids: string[] = [];
		let cursor: string | undefined;
		do {
			const query = `sort=date-desc${cursor ? `&pageCursor=${encodeURIComponent(cursor)}` : ''}`;
			const page = await getJson<{ data: Array<{ roomId: string }>; meta: { nextCursor?: string } }>(`${sandbox.url}/v1/master-inbox/rooms?${query}`, {
				authorization: `Bearer ${sandbox.apiKeys[1]}`,
			});
			ids.push(...page.data.map((room) => room.roomId));
			cursor = page.meta.nextCursor;
		} while (cursor);
		return ids;
	}

	const memberUids = () => new Set(sandbox.state.members.map((member) => member.uid));
	const proposalOf = (uid: string) => sandbox.state.proposals.find((record) => record.proposal.uid === uid);

	/**
	 * A room every auto-reply can answer in: it names a proposal whose freelancer takes part, and every
	 * agency member taking part may send (a refused send is announced, but would leave a message unanswered).
	 */
	function everyReplyCanBeSent(room: ChatRoom): boolean {
		const members = memberUids();
		const agency = room.roomUsers.filter((participant) => members.has(participant.user.id)).map((participant) => participant.user.id);
		const freelancer = room.vendorProposal && proposalOf(room.vendorProposal.id)?.freelancer.uid;
		return agency.length > 0 && agency.every((uid) => !sandbox.state.unauthorizedFreelancers.includes(uid)) && freelancer !== undefined && agency.includes(freelancer!);
	}

	/** The client messages (stories of authors who are not agency members) written since `fromMs`, with their rooms and times. */
	function clientMessagesSince(fromMs: number): Array<{ roomId: string; storyId: string; at: number }> {
		const members = memberUids();
		return Object.entries(sandbox.state.stories).flatMap(([roomId, stories]) =>
			stories.filter((story) => !members.has(story.userId) && Date.parse(story.createdAt) >= fromMs).map((story) => ({ roomId, storyId: story.storyId, at: Date.parse(story.createdAt) })),
		);
	}

	/** What one reading made: the events that reach the CRM and the replies they call for. */
	interface Made {
		/** The room of each client message that fired chat.message.sent (the webhook samples answer these). */
		webhookMessages: string[];
		invitations: Array<{ key: string; at: number }>;
		proposalChangeTimes: Map<string, number>;
		bids: string[];
		/** Rooms that got only agency messages. */
		quietRooms: string[];
		/** When wave 2 began: the trigger has read the proposal list through by then. */
		wave2Ms?: number;
	}

	/**
	 * Each client message's payload.proposal against the sandbox's proposals now: a proposal whose
	 * chatRoomId is the message's room (under every reading of vendorProposal.id); in wave 2, once no
	 * proposal of those rooms changes any more, the room's most recently updated one. Where the item
	 * names none, or not the most recent, its notice says why (the trigger still reads the proposal
	 * list, or a slow poll had no time left to read the changes): that depends on timing, so it is
	 * counted and printed, not failed.
	 */
	function roomProposalsOf(rows: CrmRow[], fromMs: number, wave2Ms: number | undefined) {
		const writtenAt = new Map(clientMessagesSince(fromMs).map((message) => [message.storyId, message.at]));
		const wrongRoom: string[] = [];
		const unexplained: string[] = [];
		const explained: string[] = [];
		let newest = 0;
		for (const row of rows) {
			const key = messageKey(row.roomId!, row.storyId!);
			if (row.proposalUid && proposalOf(row.proposalUid)?.proposal.chatRoomId !== row.roomId) wrongRoom.push(`${key}: ${row.proposalUid}`);
			const inWave2 = wave2Ms !== undefined && (writtenAt.get(row.storyId!) ?? 0) >= wave2Ms;
			const isNewest = row.proposalUid === proposalsOfRoom(sandbox.state, row.roomId!)[0]?.uid;
			if (isNewest) newest++;
			if (row.proposalUid && (!inWave2 || isNewest)) continue;
			if (row.proposalNotice) explained.push(`${key}: ${row.proposalUid ?? 'none'}: ${row.proposalNotice.split(',')[0]}`);
			else unexplained.push(`${key}: ${row.proposalUid ?? 'none'} without a notice`);
		}
		return { wrongRoom, unexplained, explained, newest, of: rows.length };
	}

	/** Everything one reading's workflows left, compared with what it made. */
	async function compare(fromMs: number, made: Made) {
		const rows = await sandboxGet<CrmRow[]>('crm');
		const clientMessages = clientMessagesSince(fromMs);
		const proposals = sandbox.state.proposals.filter((record) => record.proposal.updatedAt !== null && Date.parse(record.proposal.updatedAt) >= fromMs);
		const proposalKeys = proposals.map(({ proposal }) => proposalKey(proposal.uid, proposal.updatedAt!, Date.parse(proposal.createdAt) >= fromMs ? 'new' : 'updated'));
		const rowsVia = (via: CrmRow['via']) => rows.filter((row) => row.via === via);
		const sent = await sandboxGet<SentMessage[]>('messages');
		const repliesOf = (replier: Replier) => sent.filter((message) => message.message.startsWith(REPLY_OPENINGS[replier]));
		const bidIntents = await sandboxGet<Array<{ id: string; status: string }>>('bid-intents');
		const cancels = (await sandboxGet<RequestLogEntry[]>('requests')).filter((request) => request.method === 'DELETE' && request.apiKey === N8N_KEY);
		const roomsOfClientMessages = clientMessages.map((message) => message.roomId);
		return {
			crm: {
				messages: difference(
					clientMessages.map((message) => messageKey(message.roomId, message.storyId)),
					rowsVia('messages').map((row) => messageKey(row.roomId!, row.storyId!)),
				),
				invitations: difference(
					made.invitations.map((invitation) => invitation.key),
					rowsVia('invitations').map((row) => invitationKey(row.uid!, row.trigger!, row.status!)),
				),
				proposals: difference(proposalKeys, rowsVia('proposals').map((row) => proposalKey(row.uid!, row.updatedAt!, row.trigger!))),
				proposalsSample: difference(proposalKeys, rows.filter((row) => row.via === undefined).map((row) => proposalKey(row.uid!, row.updatedAt!, row.trigger!))),
			},
			/** One reply per client message, by room: the polling one answers every client message, the webhook ones those that fired a webhook. */
			replies: {
				polling: difference(roomsOfClientMessages, repliesOf('polling').map((reply) => reply.roomId)),
				webhook: difference(made.webhookMessages, repliesOf('webhook').map((reply) => reply.roomId)),
				ai: difference(made.webhookMessages, repliesOf('ai').map((reply) => reply.roomId)),
				byNoAutoReply: sent.filter((message) => !Object.values(REPLY_OPENINGS).some((opening) => message.message.startsWith(opening))).map((message) => message.message),
				inQuietRooms: sent.filter((message) => made.quietRooms.includes(message.roomId)).map((message) => `${message.roomId}: ${message.message}`),
			},
			roomProposals: (({ wrongRoom, unexplained }) => ({ wrongRoom, unexplained }))(roomProposalsOf(rowsVia('messages'), fromMs, made.wave2Ms)),
			bids: {
				notCancelled: made.bids.filter((id) => bidIntents.find((intent) => intent.id === id)?.status !== 'cancelled'),
				cancelRequests: difference(made.bids.map((id) => `${id} 200`), cancels.map((request) => `${request.path.split('/').pop()} ${request.status}`)),
			},
		};
	}
	const expectedComparison = {
		crm: { messages: NONE, invitations: NONE, proposals: NONE, proposalsSample: NONE },
		replies: { polling: NONE, webhook: NONE, ai: NONE, byNoAutoReply: [], inQuietRooms: [] },
		roomProposals: { wrongRoom: [], unexplained: [] },
		bids: { notCancelled: [], cancelRequests: NONE },
	};
	type Comparison = Awaited<ReturnType<typeof compare>>;
	const nothingMissing = (found: Comparison) =>
		[...Object.values(found.crm), found.replies.polling, found.replies.webhook, found.replies.ai, found.bids.cancelRequests].every((each) => each.missing.length === 0) &&
		found.bids.notCancelled.length === 0;

	/** The Message and Invitation triggers' rows are all there: wave 2 may write into rooms and invitations they read. */
	const triggersCaughtUp = (found: Comparison) => found.crm.messages.missing.length === 0 && found.crm.invitations.missing.length === 0;

	/** Waits until `done` holds (or the time is up: the comparison then says what did not arrive). */
	async function until(done: (found: Comparison) => boolean, fromMs: number, made: Made): Promise<void> {
		const deadline = Date.now() + ARRIVAL_TIMEOUT_MS;
		while (!done(await compare(fromMs, made)) && Date.now() < deadline) await sleep(1_000);
	}

	/** The runs of the set's workflows that have not finished, and the failed ones with the node and HTTP code they failed at. */
	async function runsOf(set: WorkflowToImport[]): Promise<{ unfinished: string[]; failed: FailedRun[]; counts: Record<string, number> }> {
		const unfinished: string[] = [];
		const failed: FailedRun[] = [];
		const counts: Record<string, number> = {};
		for (const workflow of set) {
			const executions: ExecutionSummary[] = await listExecutions(n8n!.url, n8n!.restHeaders, workflow.id);
			counts[workflow.id] = executions.length;
			for (const execution of executions) {
				if (['new', 'running', 'waiting'].includes(execution.status)) unfinished.push(`${workflow.id} #${execution.id}`);
				else if (execution.status !== 'success') failed.push(await failureOf(workflow, execution));
			}
		}
		return { unfinished, failed, counts };
	}

	async function failureOf(workflow: WorkflowToImport, execution: ExecutionSummary): Promise<FailedRun> {
		const { data } = await getN8nJson<{ data: { data: string } }>(`${n8n!.url}/rest/executions/${execution.id}`, n8n!.restHeaders);
		const { resultData } = flatted.parse(data.data) as RunJson['data'] & { resultData: { lastNodeExecuted?: string } };
		const error = resultData.error as { message?: string; httpCode?: string; node?: { name?: string } } | undefined;
		return { workflow: workflow.id, execution: execution.id, node: error?.node?.name ?? resultData.lastNodeExecuted, httpCode: error?.httpCode, message: error?.message };
	}

	/** Whether the failed run is of a sample whose sticky note announces a failure at that node with that code. */
	const isAnnounced = (reading: number, run: FailedRun) => {
		const sample = samples.find((candidate) => workflowIdFor(reading, candidate.id) === run.workflow);
		return (ANNOUNCED_FAILURES[sample?.id ?? ''] ?? []).some((failure) => failure.node === run.node && failure.codes.includes(String(run.httpCode)));
	};

	describe.each(SINGLE_READINGS.map((reading, index) => ({ ...reading, index })))('under the reading $label', ({ label, variants, index }) => {
		it('each client message, invitation change and proposal change once in the CRM, one reply per client message from each auto-reply and none to a reply, the bid cancelled, no unannounced failed run', async () => {
			const set = sets[index];
			expect((await postJson<{ data: object }>(`${sandbox.origin}/_sandbox/variants`, variants)).data).toEqual(variants);
			await postJson(`${sandbox.origin}/_sandbox/reset`, {});
			const fromMs = Date.now();
			const cpuFrom = { n8n: await cpuSecondsOf(n8n!.pid), test: process.cpuUsage() };
			const arrivals = new ArrivalWatcher(() => sandboxGet<CrmRow[]>('crm'), rowKeyForLatency);
			const made: Made = { webhookMessages: [], invitations: [], proposalChangeTimes: new Map(), bids: [], quietRooms: [] };
			const steps: Record<string, number> = {};
			try {
				let stepAt = Date.now();
				await publishForTest(set.map((workflow) => workflow.id));
				steps['publish'] = Date.now() - stepAt;
				// The activation polled once; the Proposal Trigger's first poll with a starting point shows the scheduled polls run.
				await waitForRequest((request) => request.path.endsWith('/v1/agency/proposals') && request.query.updatedSince !== undefined);

				stepAt = Date.now();
				const listed = await roomsAsListed();
				const answerable = listed.map((roomId) => sandbox.state.rooms.find((room) => room.roomId === roomId)!).filter(everyReplyCanBeSent);
				const far = answerable[answerable.length - 1];
				const [twice, quiet] = answerable.slice(Math.floor(answerable.length / 3)).filter((room) => room !== far);
				const replied = sandbox.state.proposals.find(
					({ proposal }) => proposal.updatedAt !== null && [twice, quiet, far].every((room) => room.roomId !== proposal.chatRoomId) && answerable.some((room) => room.roomId === proposal.chatRoomId),
				)!;
				const others = sandbox.state.proposals.filter((record) => record.proposal.updatedAt !== null && record.proposal.chatRoomId === null).slice(0, 4);
				expect({ far: !!far, twice: !!twice, quiet: !!quiet, replied: !!replied, others: others.length }).toEqual({ far: true, twice: true, quiet: true, replied: true, others: 4 });
				const place = (room: ChatRoom) => `${room.roomId} (#${listed.indexOf(room.roomId) + 1} of ${listed.length})`;
				const rooms = `two at once in ${place(twice)}, one far down in ${place(far)}, agency only in ${place(quiet)}, a client reply in ${replied.proposal.chatRoomId}`;

				const clientMessage = async (target: { roomId: string } | { newRoom: true }, count = 1) => {
					const answer = await change<{ roomId: string }>({ kind: 'clientMessage', ...target, ...(count > 1 && { count }) });
					made.webhookMessages.push(...Array.from({ length: count }, () => answer.roomId));
					return answer.roomId;
				};
				const agencyMessage = (roomId: string) => change({ kind: 'agencyMessage', roomId, text: `An agency member's own message in ${roomId}` });
				const newInvitation = async () => {
					const { invite } = await change<{ invite: { uid: string; status: string } }>({ kind: 'newInvitation', title: `Readings: ${label}` });
					made.invitations.push({ key: invitationKey(invite.uid, 'new', invite.status), at: Date.now() });
					return invite.uid;
				};
				const invitationStatus = async (invitationUid: string, status: string) => {
					const { invite } = await change<{ invite: { uid: string; status: string } }>({ kind: 'invitationStatus', invitationUid, status });
					made.invitations.push({ key: invitationKey(invite.uid, 'statusChanged', invite.status), at: Date.now() });
				};
				const proposalChange = async (body: object) => {
					const record = await change<ProposalRecord>(body);
					made.proposalChangeTimes.set(record.proposal.uid, Date.now());
				};

				// Wave 1.
				await agencyMessage(twice.roomId);
				await clientMessage({ roomId: twice.roomId }, 2);
				await agencyMessage(twice.roomId);
				await clientMessage({ roomId: far.roomId });
				const newRoom = await clientMessage({ newRoom: true });
				await agencyMessage(quiet.roomId);
				made.quietRooms.push(quiet.roomId);
				const invited = await newInvitation();
				await newInvitation();
				await invitationStatus(sandbox.state.invitations[0].invite.uid, 'accepted');
				await invitationStatus(sandbox.state.invitations[1].invite.uid, 'declined');
				// A client's reply to a proposal is also a client message in its room (no webhook).
				await proposalChange({ kind: 'clientReply', proposalUid: replied.proposal.uid });
				await proposalChange({ kind: 'viewed', proposalUid: others[0].proposal.uid });
				await proposalChange({ kind: 'hire', proposalUid: others[1].proposal.uid });
				await proposalChange({ kind: 'status', proposalUid: others[2].proposal.uid, status: 'archived' });
				await proposalChange({ kind: 'newProposal' });
				made.bids.push((await change<{ id: string }>({ kind: 'scheduleBid' })).id);
				await until(triggersCaughtUp, fromMs, made);
				steps['wave 1 read by the triggers'] = Date.now() - stepAt;

				// Wave 2: rooms read before, a room that is no longer new, an invitation the trigger emitted.
				stepAt = Date.now();
				made.wave2Ms = stepAt;
				await clientMessage({ roomId: twice.roomId });
				await clientMessage({ roomId: newRoom });
				await agencyMessage(far.roomId);
				await agencyMessage(newRoom);
				await invitationStatus(invited, 'accepted');
				await proposalChange({ kind: 'viewed', proposalUid: others[3].proposal.uid });
				await until(nothingMissing, fromMs, made);
				steps['wave 2 and every reply arrived'] = Date.now() - stepAt;

				// Wave 3: a client message synced late, written a second before the agency's message in the
				// new room that the Message Triggers (the CRM's and the polling auto-reply's) read since.
				stepAt = Date.now();
				const readNewRoomSince = async (fromAt: number) =>
					(await sandboxGet<RequestLogEntry[]>('requests')).filter((request) => request.apiKey === N8N_KEY && request.status === 200 && request.path.endsWith(`/rooms/${newRoom}/stories`) && Date.parse(request.at) >= fromAt).length;
				const agencyInNewRoomAt = Math.max(...sandbox.state.stories[newRoom].map((story) => Date.parse(story.createdAt)));
				await waitFor('both Message Triggers reading the new room after the agency message', () => readNewRoomSince(agencyInNewRoomAt), (reads) => reads >= 2);
				const late = await change<{ roomId: string }>({ kind: 'lateClientMessage', roomId: newRoom, beforeLastByMs: 1_000 });
				made.webhookMessages.push(late.roomId);
				await until(nothingMissing, fromMs, made);
				steps['wave 3, a late sync, arrived'] = Date.now() - stepAt;

				await sleep(SETTLE_MS);
				const found = await compare(fromMs, made);
				const runs = await runsOf(set);
				const announced = runs.failed.filter((run) => isAnnounced(index, run));
				const cpu = { n8n: (await cpuSecondsOf(n8n!.pid)) - cpuFrom.n8n, test: cpuSecondsSince(cpuFrom.test) };
				await report(label, { fromMs, made, rooms, arrivals, steps, cpu, runs: runs.counts, announced });
				expect({ ...found, unfinishedRuns: runs.unfinished, unannouncedFailures: runs.failed.filter((run) => !isAnnounced(index, run)) }).toEqual({
					...expectedComparison,
					unfinishedRuns: [],
					unannouncedFailures: [],
				});
			} finally {
				await arrivals.stop();
			}
		}, READING_TIMEOUT_MS);
	});

	describe('the room order switched under running Message Triggers', () => {
		/** After a publish: the activation poll has run (it runs at the activation) long before this. */
		const ACTIVATION_SETTLE_MS = 5_000;

		it(`${SWITCHED_ORDERS.join(' → ')}: each trigger posts every client message written after its activation once`, async () => {
			await postJson(`${sandbox.origin}/_sandbox/variants`, { ...SINGLE_READINGS[0].variants, roomSort: SWITCHED_ORDERS[0] });
			await postJson(`${sandbox.origin}/_sandbox/reset`, {});
			const fromMs = Date.now();
			const arrivals = new ArrivalWatcher(() => sandboxGet<CrmRow[]>('crm'), (row) => `${row.via} ${messageKey(row.roomId!, row.storyId!)}`);
			/** Per trigger, the newest message time when it was activated: what it must post is what came after. */
			const historyOf = new Map<keyof typeof SWITCHED_TRIGGERS, number>();
			const newestMessageAt = () => Math.max(...Object.values(sandbox.state.stories).flatMap((stories) => stories.map((story) => Date.parse(story.createdAt))));
			const activate = async (via: keyof typeof SWITCHED_TRIGGERS) => {
				historyOf.set(via, newestMessageAt());
				await publishForTest([SWITCHED_TRIGGERS[via]]);
				await sleep(ACTIVATION_SETTLE_MS);
			};
			const expectedFor = (via: keyof typeof SWITCHED_TRIGGERS) =>
				clientMessagesSince(0)
					.filter((message) => message.at > historyOf.get(via)!)
					.map((message) => messageKey(message.roomId, message.storyId));
			const found = async () => {
				const rows = await sandboxGet<CrmRow[]>('crm');
				return Object.fromEntries(
					[...historyOf.keys()].map((via) => [via, difference(expectedFor(via), rows.filter((row) => row.via === via).map((row) => messageKey(row.roomId!, row.storyId!)))]),
				);
			};
			const caughtUp = async () => {
				const deadline = Date.now() + ARRIVAL_TIMEOUT_MS;
				while (Object.values(await found()).some((each) => each.missing.length > 0) && Date.now() < deadline) await sleep(1_000);
			};
			const client = (body: object) => change<{ roomId: string }>({ kind: 'clientMessage', ...body });
			/** Written just before the newest message there is, in a room whose last message is older: synced late. */
			const late = (roomId: string) => change({ kind: 'lateClientMessage', roomId, createdAt: new Date(newestMessageAt() - 1).toISOString() });
			const byLastMessage = () => [...sandbox.state.rooms].sort((a, b) => (a.lastStoryAt ?? '').localeCompare(b.lastStoryAt ?? '')).map((room) => room.roomId);
			const steps: string[] = [];
			try {
				await activate('swBefore');
				const [far, second, third] = byLastMessage();
				const firstCreated = sandbox.state.rooms[0].roomId;
				// Under the last message: far down the list, two at once in one room, a new room, an agency message.
				await client({ roomId: far });
				await client({ roomId: byLastMessage()[30], count: 2 });
				const newRoom = (await client({ newRoom: true })).roomId;
				await change({ kind: 'agencyMessage', roomId: byLastMessage()[20] });
				await caughtUp();
				steps.push(`${SWITCHED_ORDERS[0]}: ${JSON.stringify(await found())}`);

				await postJson(`${sandbox.origin}/_sandbox/variants`, { roomSort: SWITCHED_ORDERS[1] });
				await activate('swAfterFirst');
				// In order of creation: the room created first is listed last; one synced late.
				await client({ roomId: firstCreated });
				await late(second);
				await client({ roomId: newRoom });
				await caughtUp();
				steps.push(`${SWITCHED_ORDERS[1]}: ${JSON.stringify(await found())}`);

				await postJson(`${sandbox.origin}/_sandbox/variants`, { roomSort: SWITCHED_ORDERS[2] });
				await activate('swAfterSecond');
				// Sorted by sync time, a page of old rooms re-synced at each sweep's start, and more here.
				await change({ kind: 'roomResync', count: 10 });
				await client({ roomId: third });
				await client({ roomId: far });
				await caughtUp();
				steps.push(`${SWITCHED_ORDERS[2]}: ${JSON.stringify(await found())}`);

				await postJson(`${sandbox.origin}/_sandbox/variants`, { roomSort: SWITCHED_ORDERS[3] });
				await change({ kind: 'agencyMessage', roomId: third });
				await client({ roomId: byLastMessage()[10] });
				await caughtUp();

				await postJson(`${sandbox.origin}/_sandbox/variants`, { roomSort: SWITCHED_ORDERS[4] });
				await client({ roomId: firstCreated });
				await late(byLastMessage()[5]);
				await caughtUp();
				await sleep(SETTLE_MS);
				const result = await found();
				for (const via of historyOf.keys()) {
					const events = expectedFor(via).map((key) => ({ madeAt: Date.parse(sandbox.state.stories[key.split(' ')[0]].find((story) => story.storyId === key.split(' ')[1])!.createdAt), arrivedAt: arrivals.firstSeen(`${via} ${key}`) }));
					process.stderr.write(`switched orders, ${via}: ${latencySummary(events)}\n`);
				}
				process.stderr.write(`switched orders: ${((Date.now() - fromMs) / 1000).toFixed(0)} s; after each of the first three orders ${steps.join('; ')}\n`);
				expect(result).toEqual({ swBefore: NONE, swAfterFirst: NONE, swAfterSecond: NONE });
			} finally {
				await arrivals.stop();
			}
		}, SWITCHED_ORDERS_TIMEOUT_MS);
	});

	async function waitForRequest(matches: (request: RequestLogEntry) => boolean): Promise<void> {
		await waitFor('a poll of the Proposal Trigger', () => sandboxGet<RequestLogEntry[]>('requests'), (requests) => requests.some((request) => request.apiKey === N8N_KEY && request.status === 200 && matches(request)));
	}

	/**
	 * Waits until the service gets no more requests: a poll in flight when its workflow was unpublished
	 * goes on paging (n8n discards its result), and must not reach the next reading.
	 */
	async function untilQuiet(): Promise<void> {
		const deadline = Date.now() + 60_000;
		let seen = -1;
		for (;;) {
			const count = (await sandboxGet<RequestLogEntry[]>('requests')).length;
			if (count === seen || Date.now() > deadline) return;
			seen = count;
			await sleep(3_000);
		}
	}

	function rowKeyForLatency(row: CrmRow): string {
		if (row.via === 'messages') return `messages ${messageKey(row.roomId!, row.storyId!)}`;
		if (row.via === 'invitations') return `invitations ${invitationKey(row.uid!, row.trigger!, row.status!)}`;
		return `${row.via ?? 'sample'} ${row.uid}`;
	}

	interface ReadingFigures {
		fromMs: number;
		made: Made;
		rooms: string;
		arrivals: ArrivalWatcher<CrmRow>;
		steps: Record<string, number>;
		cpu: { n8n: number; test: number };
		runs: Record<string, number>;
		announced: FailedRun[];
	}

	async function report(label: string, { fromMs, made, rooms, arrivals, steps, cpu, runs, announced }: ReadingFigures): Promise<void> {
		const requests = (await sandboxGet<RequestLogEntry[]>('requests')).filter((request) => request.apiKey === N8N_KEY);
		const refused = requests.filter((request) => request.status === 400).map((request) => `${request.path.replace(/^\/service/, '')} ${Object.keys(request.query).join(',')}`);
		const messages = clientMessagesSince(fromMs).map((message) => ({ madeAt: message.at, arrivedAt: arrivals.firstSeen(`messages ${messageKey(message.roomId, message.storyId)}`) }));
		const invitations = made.invitations.map((invitation) => ({ madeAt: invitation.at, arrivedAt: arrivals.firstSeen(`invitations ${invitation.key}`) }));
		const proposals = [...made.proposalChangeTimes].map(([uid, at]) => ({ madeAt: at, arrivedAt: arrivals.firstSeen(`proposals ${uid}`) }));
		const roomProposals = roomProposalsOf((await sandboxGet<CrmRow[]>('crm')).filter((row) => row.via === 'messages'), fromMs, made.wave2Ms);
		process.stderr.write(
			[
				`reading ${label}: steps (ms) ${JSON.stringify(steps)}; CPU (s) n8n ${cpu.n8n.toFixed(1)}, test and sandbox ${cpu.test.toFixed(1)}`,
				`  rooms: ${rooms}`,
				`  requests of the workflows: ${requests.length}, refused (400): ${refused.length ? refused.join('; ') : 'none'}`,
				`  client messages: ${latencySummary(messages)}`,
				`  invitation changes: ${latencySummary(invitations)}`,
				`  proposal changes: ${latencySummary(proposals)}`,
				`  payload.proposal: the room's most recent in ${roomProposals.newest} of ${roomProposals.of} items${roomProposals.explained.length ? `; with a notice: ${roomProposals.explained.join('; ')}` : ''}`,
				`  runs: ${JSON.stringify(runs)}`,
				...(announced.length ? [`  announced failures: ${JSON.stringify(announced)}`] : []),
			].join('\n') + '\n',
		);
	}
});
