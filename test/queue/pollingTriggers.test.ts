/**
 * The Message Trigger and the Invitation Trigger in n8n's queue mode (the pinned n8n): Postgres,
 * Redis, one main and two workers, started once for this file; no webhook process (polling needs no
 * public URL). The main polls, the workers run the executions. Each workflow posts one CRM row per
 * item, and every test compares the rows with the events it made: one per client message and one
 * per new or changed invitation, none for an agency member's message, none for history.
 *
 * The service is the sandbox with pages of at most 5 rows, behind a loopback proxy that records
 * every request of the triggers and can hold them (to kill the main in the middle of a sweep). Which
 * worker ran an execution comes from the workers' logs; whether n8n's durable poll scheduler holds
 * the triggers' state from its `poller_state` table.
 */
import { startSandbox, type Sandbox, type SandboxVariants } from '../../sandbox';
import { NODE_TYPES, pollEverySeconds, sandboxCredential } from '../../scripts/n8n/agencyInbox';
import type { QueueTopology } from '../../scripts/n8n/queue';
import { LoopbackProxy, type ProxiedRequest } from '../nodes/AgencyInboxProposalTrigger/loopbackProxy';
import { DURABLE_SCHEDULER } from '../e2e/pollingN8n';
import { finishedExecutions, getJson, listExecutions, postJson, sleep, waitFor, type ExecutionSummary } from '../e2e/support';
import { SETUP_TIMEOUT_MS, WORKER_NAMES, n8nVersion, pollingToCrm, startQueueForTests, workersThatRan, type QueueForTests } from './support';

const CREDENTIAL = { id: 'qCredPolling001', name: 'Agency Inbox (polling triggers in queue mode)' };
const WORKFLOWS = { messages: 'qMessagePoll0001', invitations: 'qInvitePoll00001' };
/**
 * The readings of the spec that differ most from the default and that a running trigger can be switched to:
 * rooms by the client's last message, messages oldest first, invitations in no time order, a room's proposal
 * under a marketplace id, page sizes the spec does not name refused (400), members writing under marketplace
 * user ids. Not rooms in order of creation: the Message Trigger learns from the list whether a new message
 * moves its room up and keeps that; test/e2e/readings.test.ts activates it under that reading.
 */
const OTHER_VARIANT: Partial<SandboxVariants> = {
	roomSort: 'lastClientMessageAt',
	storyOrder: 'oldestFirst',
	invitationOrder: 'scrambled',
	vendorProposalId: 'marketplaceId',
	unnamedQueryParameters: 'rejected',
	authorIds: 'marketplaceUserId',
};
/** After every expected row arrived: time for a duplicate to arrive (missed poll times are claimed together after a restart). */
const SETTLE_MS = 15_000;

interface CrmRow {
	kind?: string;
	roomId?: string;
	storyId?: string;
	text?: string;
	uid?: string;
	trigger?: string;
	status?: string;
}

/** Rows as "roomId storyId text" (messages) and "uid trigger STATUS" (invitations). */
interface Rows {
	messages: string[];
	invitations: string[];
}
const messageKey = (row: { roomId?: string; storyId?: string; text?: string }) => `${row.roomId} ${row.storyId} ${row.text}`;
const invitationKey = (row: { uid?: string; trigger?: string; status?: string }) => `${row.uid} ${row.trigger} ${row.status}`;

interface Story {
	storyId: string;
	roomId?: string;
	message: string;
}
interface Invitation {
	invite: { uid: string; status: string };
}

describe(`the Message and Invitation Triggers in n8n ${n8nVersion} queue mode (Postgres, Redis, a main, 2 workers)`, () => {
	let sandbox: Sandbox;
	let proxy: LoopbackProxy;
	let queue: QueueForTests | undefined;
	const figures: Record<string, unknown> = {};

	/** Every request the triggers sent, in order of arrival. */
	const requests: Array<{ path: string; paged: boolean }> = [];
	let onRequest: ((request: ProxiedRequest) => void) | undefined;
	/** While set, every request waits before it reaches the service. */
	let held: Promise<void> | undefined;
	let releaseHeld = () => undefined as void;

	const topology = (): QueueTopology => queue!.topology;
	const main = () => topology().main.current;
	const allExecutionsOf = (workflowId: string) => listExecutions(main().url, main().restHeaders, workflowId);
	const sandboxGet = <T>(route: string) => getJson<{ data: T }>(`${sandbox.origin}/_sandbox/${route}`).then((answer) => answer.data);
	const change = <T>(body: object) => postJson<{ data: T }>(`${sandbox.origin}/_sandbox/changes`, body).then((answer) => answer.data);

	/** The CRM rows after the first `since`, by kind. */
	const crmRows = async (since = 0): Promise<Rows> => {
		const rows = (await sandboxGet<CrmRow[]>('crm')).slice(since);
		return { messages: rows.filter((row) => row.kind === 'message').map(messageKey), invitations: rows.filter((row) => row.kind === 'invitation').map(invitationKey) };
	};
	const crmCount = async () => (await sandboxGet<CrmRow[]>('crm')).length;
	/** Polls of each trigger so far: the first page of a sweep (the Message Trigger also re-reads it after a sweep of several pages). */
	const polls = () => ({
		messages: requests.filter((request) => request.path.endsWith('/v1/master-inbox/rooms') && !request.paged).length,
		invitations: requests.filter((request) => request.path.endsWith('/v1/agency/invitations') && !request.paged).length,
	});
	const waitForPolls = async (count: number) => {
		const from = polls();
		await waitFor(`${count} more polls of each trigger`, async () => polls(), (now) => now.messages >= from.messages + count && now.invitations >= from.invitations + count);
	};

	/** Changes to the sandbox, each noted as the CRM row it must give (none for an agency member's message). */
	function events() {
		const expected: Rows = { messages: [], invitations: [] };
		return {
			expected,
			/** `count` messages of the room's client (of a new room's client with `newRoom`); returns the room. */
			async client(room: { roomId: string } | { newRoom: true }, text: string, count = 1): Promise<string> {
				const made = await change<Story & { stories?: Story[] }>({ kind: 'clientMessage', ...room, text, count });
				for (const story of made.stories ?? [made]) expected.messages.push(messageKey({ roomId: made.roomId, storyId: story.storyId, text: story.message }));
				return made.roomId!;
			},
			async agency(roomId: string): Promise<void> {
				await change({ kind: 'agencyMessage', roomId, text: 'A reply of the agency: starts nothing' });
			},
			async newInvitation(): Promise<string> {
				const { invite } = await change<Invitation>({ kind: 'newInvitation' });
				expected.invitations.push(invitationKey({ uid: invite.uid, trigger: 'new', status: invite.status }));
				return invite.uid;
			},
			/** Moves a seeded invitation to another status. */
			async statusChange(uid: string): Promise<void> {
				const current = sandbox.state.invitations.find((invitation) => invitation.invite.uid === uid)!.invite.status;
				const { invite } = await change<Invitation>({ kind: 'invitationStatus', invitationUid: uid, status: current === 'PENDING' ? 'accepted' : 'pending' });
				expected.invitations.push(invitationKey({ uid, trigger: 'statusChanged', status: invite.status }));
			},
		};
	}

	/**
	 * Waits until every expected row is in the CRM (after the first `since` rows), then SETTLE_MS longer
	 * (or until `settleUntil`, if later); the rows must be exactly the expected ones.
	 */
	async function expectEachOnce(expected: Rows, since: number, timeoutMs = 180_000, settleUntil = 0): Promise<number> {
		const startedAt = Date.now();
		const arrived = (rows: Rows) => expected.messages.every((key) => rows.messages.includes(key)) && expected.invitations.every((key) => rows.invitations.includes(key));
		await waitFor('every expected CRM row', () => crmRows(since), arrived, timeoutMs);
		const arrivedMs = Date.now() - startedAt;
		await sleep(Math.max(SETTLE_MS, settleUntil - Date.now()));
		const rows = await crmRows(since);
		expect(rows.messages.sort()).toEqual([...expected.messages].sort());
		expect(rows.invitations.sort()).toEqual([...expected.invitations].sort());
		return arrivedMs;
	}

	const runCounts = async () => ({ messages: (await allExecutionsOf(WORKFLOWS.messages)).length, invitations: (await allExecutionsOf(WORKFLOWS.invitations)).length });

	/** The executions since `before` (counts per workflow): all succeeded, each on a worker, none without an item; returns the runs per worker. */
	async function expectRunsOnWorkers(before: { messages: number; invitations: number }, rows: Rows): Promise<Record<string, number>> {
		const since = async (workflowId: string, count: number) => {
			const all = await waitFor(`the runs of ${workflowId} to end`, () => allExecutionsOf(workflowId), (found) => finishedExecutions(found).length === found.length);
			// Newest first.
			return all.slice(0, all.length - count);
		};
		const messageRuns = await since(WORKFLOWS.messages, before.messages);
		const invitationRuns = await since(WORKFLOWS.invitations, before.invitations);
		const runs: ExecutionSummary[] = [...messageRuns, ...invitationRuns];
		expect(runs.filter((run) => run.status !== 'success')).toEqual([]);
		// Each run posts one row per item: never more runs than rows.
		expect(messageRuns.length).toBeLessThanOrEqual(rows.messages.length);
		expect(invitationRuns.length).toBeLessThanOrEqual(rows.invitations.length);
		if (rows.messages.length > 0) expect(messageRuns.length).toBeGreaterThan(0);
		if (rows.invitations.length > 0) expect(invitationRuns.length).toBeGreaterThan(0);
		const workers = await waitFor('the worker of every run', () => workersThatRan(topology(), runs), (found) => found.every((worker) => worker !== undefined));
		expect(workers.filter((worker) => !WORKER_NAMES.includes(worker!))).toEqual([]);
		return Object.fromEntries(WORKER_NAMES.map((name) => [name, workers.filter((worker) => worker === name).length]));
	}

	/**
	 * Holds every request once the Message Trigger asks for a second page of rooms (a sweep in the
	 * middle of a backlog), then kills the main (SIGKILL). Whatever a poll handed to n8n just before
	 * has 1.5 s to be queued; no poll can hand anything over while its requests are held.
	 */
	async function killMainInTheMiddleOfASweep(makeBacklog: () => Promise<void>): Promise<number> {
		const paging = new Promise<void>((resolve) => {
			onRequest = (request) => {
				if (!request.path.endsWith('/v1/master-inbox/rooms') || !request.query.has('pageCursor')) return;
				onRequest = undefined;
				held = new Promise<void>((release) => {
					releaseHeld = () => {
						held = undefined;
						release();
					};
				});
				resolve();
			};
		});
		await makeBacklog();
		let timer: NodeJS.Timeout | undefined;
		const giveUp = new Promise<never>((_, reject) => {
			timer = setTimeout(() => reject(new Error('no sweep of the backlog asked for a second page of rooms within 120 s')), 120_000);
		});
		try {
			await Promise.race([paging, giveUp]);
		} finally {
			clearTimeout(timer);
			onRequest = undefined;
		}
		await sleep(1_500);
		const killedAt = Date.now();
		await main().kill();
		releaseHeld();
		return killedAt;
	}

	/** The triggers' state as n8n's durable poll scheduler holds it: `seq` per workflow from `poller_state`. */
	const durableCursors = async () => {
		const rows = await topology().infrastructure.postgres.query(`SELECT "workflowId", cursor FROM poller_state WHERE "workflowId" IN ('${WORKFLOWS.messages}', '${WORKFLOWS.invitations}')`);
		const seqs: Record<string, number> = {};
		for (const line of rows.split('\n').filter(Boolean)) {
			const [workflowId, cursor] = [line.slice(0, line.indexOf('|')), line.slice(line.indexOf('|') + 1)];
			const state = JSON.parse(cursor) as { messages?: { seq: number }; invitations?: { seq: number } };
			seqs[workflowId] = (state.messages ?? state.invitations)?.seq ?? 0;
		}
		return seqs;
	};

	beforeAll(async () => {
		const startedAt = Date.now();
		// Pages of at most 5: the 60 rooms are 12 pages, the 45 invitations 9, a room's messages often more than one.
		sandbox = await startSandbox({ requestsPerMinute: 0, maxPageSize: 5 });
		proxy = new LoopbackProxy(sandbox.origin);
		proxy.beforeForward = async (request) => {
			requests.push({ path: request.path, paged: request.query.has('pageCursor') });
			onRequest?.(request);
			while (held) await held;
		};
		await proxy.start();
		const credential = { ...sandboxCredential({ ...sandbox, url: `${proxy.origin}/service`, origin: proxy.origin }, 6_000), ...CREDENTIAL };
		const crm = (row: string) => `={{ JSON.stringify(${row}) }}`;
		const workflows = [
			pollingToCrm({
				id: WORKFLOWS.messages,
				name: 'Queue: Agency Inbox Message Trigger',
				trigger: { name: 'Client Message', type: NODE_TYPES.messageTrigger, parameters: { pollTimes: pollEverySeconds(3) } },
				credential: CREDENTIAL,
				sandboxOrigin: sandbox.origin,
				row: crm("{ kind: 'message', roomId: $json.payload.chat.id, storyId: $json.message.storyId, text: $json.message.text }"),
			}),
			pollingToCrm({
				id: WORKFLOWS.invitations,
				name: 'Queue: Agency Inbox Invitation Trigger',
				trigger: { name: 'Invitation', type: NODE_TYPES.invitationTrigger, parameters: { pollTimes: pollEverySeconds(3), triggerOn: 'both' } },
				credential: CREDENTIAL,
				sandboxOrigin: sandbox.origin,
				row: crm("{ kind: 'invitation', uid: $json.invite.uid, trigger: $json.trigger, status: $json.invite.status }"),
			}),
		];
		queue = await startQueueForTests('queue-polling', {
			credentials: [credential],
			workflows,
			publish: workflows.map((workflow) => workflow.id),
			webhookProcesses: 0,
			env: { GENERIC_TIMEZONE: 'UTC', N8N_LOG_LEVEL: 'info' },
		});
		figures['setup ms (build, Postgres, Redis, import, main, 2 workers)'] = Date.now() - startedAt;
	}, SETUP_TIMEOUT_MS);

	afterAll(async () => {
		releaseHeld();
		await queue?.topology.stop();
		queue?.removeWorkDir();
		await proxy?.close();
		await sandbox?.close();
		process.stderr.write(`queue polling figures: ${JSON.stringify(figures, null, 1)}\n`);
	});

	it('emits nothing historic at activation; a client message and a new invitation then run once each, on a worker', async () => {
		await waitForPolls(3);
		expect(await crmRows()).toEqual({ messages: [], invitations: [] });
		expect(await runCounts()).toEqual({ messages: 0, invitations: 0 });

		const script = events();
		// The room longest without a message: far down the list.
		const oldest = [...sandbox.state.rooms].sort((a, b) => (a.lastStoryAt ?? '').localeCompare(b.lastStoryAt ?? ''))[0];
		await script.client({ roomId: oldest.roomId }, 'Hello after the activation');
		await script.newInvitation();
		figures['after activation: ms until both rows'] = await expectEachOnce(script.expected, 0);
		figures['after activation: runs per worker'] = await expectRunsOnWorkers({ messages: 0, invitations: 0 }, script.expected);
	});

	it('a burst across 17 rooms and 8 invitation events while every worker is stopped: the main polls on, the runs queue up, each event runs once when the workers are back', async () => {
		const crmBefore = await crmCount();
		const runsBefore = await runCounts();
		await Promise.all(topology().workers.map((worker) => worker.current.stop()));
		const pollsBefore = polls();

		const script = events();
		const seeded = sandbox.state.rooms.slice(0, 60);
		const rooms = seeded.filter((_, index) => index % 3 === 0).slice(0, 16).map((room) => room.roomId);
		const invitations = sandbox.state.invitations.slice(0, 45);
		for (const [index, roomId] of rooms.entries()) {
			await script.client({ roomId }, `Burst, room ${index + 1}`, index % 4 === 0 ? 2 : 1);
			if (index % 5 === 2) await script.agency(roomId);
			if (index % 3 === 1) await script.newInvitation();
			await sleep(150);
		}
		const newRoom = await script.client({ newRoom: true }, 'Burst, a new client');
		for (const [index, roomId] of rooms.filter((_, index) => index % 2 === 0).entries()) {
			if (index % 2 === 1) await script.agency(roomId);
			await script.client({ roomId }, `Burst, room ${roomId} again`, index === 0 ? 2 : 1);
			await sleep(150);
		}
		await script.client({ roomId: newRoom }, 'Burst, the new client again');
		// Rooms where only the agency writes.
		for (const room of seeded.filter((_, index) => index % 3 === 1).slice(0, 3)) await script.agency(room.roomId);
		for (const invitation of [invitations[4], invitations[14], invitations[24]]) await script.statusChange(invitation.invite.uid);
		expect(script.expected.messages.length).toBeGreaterThanOrEqual(30);
		expect(script.expected.invitations).toHaveLength(8);

		// The main alone polls: the runs it hands over wait in the queue, nothing reaches the CRM.
		const queued = await waitFor(
			'runs of both workflows to queue up',
			runCounts,
			(counts) => counts.messages > runsBefore.messages && counts.invitations > runsBefore.invitations,
			120_000,
		);
		await waitForPolls(3);
		const whileStopped = { polls: polls(), runs: await runCounts(), rows: (await crmCount()) - crmBefore };
		expect(whileStopped.rows).toBe(0);
		const unfinished = async (workflowId: string) => {
			const all = await allExecutionsOf(workflowId);
			return all.length - finishedExecutions(all).length;
		};
		figures['burst with the workers stopped'] = {
			clientMessages: script.expected.messages.length,
			invitationEvents: script.expected.invitations.length,
			pollsWhileStopped: { messages: whileStopped.polls.messages - pollsBefore.messages, invitations: whileStopped.polls.invitations - pollsBefore.invitations },
			runsQueued: { messages: whileStopped.runs.messages - runsBefore.messages, invitations: whileStopped.runs.invitations - runsBefore.invitations },
			unfinished: { messages: await unfinished(WORKFLOWS.messages), invitations: await unfinished(WORKFLOWS.invitations) },
			firstQueued: queued,
		};

		await Promise.all(topology().workers.map((worker) => worker.restart()));
		figures['burst: ms from the workers being back to every row'] = await expectEachOnce(script.expected, crmBefore);
		figures['burst: runs per worker'] = await expectRunsOnWorkers(runsBefore, script.expected);
	});

	describe('the main killed (SIGKILL) in the middle of a backlog sweep, with changes while it is down', () => {
		/** A backlog across 12 rooms (3 pages of rooms), then the kill; the variant switched and more changes made while the main is down; the main started again. */
		async function killAndRecover(variantWhileDown?: Partial<SandboxVariants>, env?: NodeJS.ProcessEnv) {
			const crmBefore = await crmCount();
			const runsBefore = await runCounts();
			const script = events();
			const seeded = sandbox.state.rooms.slice(0, 60);
			const rooms = seeded.filter((_, index) => index % 5 === 1).map((room) => room.roomId);
			const invitations = sandbox.state.invitations.slice(0, 45);
			const tag = env ? 'durable' : 'default poller';
			const killedAt = await killMainInTheMiddleOfASweep(async () => {
				for (const [index, roomId] of rooms.entries()) {
					await script.client({ roomId }, `Backlog (${tag}), room ${index + 1}`, index % 4 === 3 ? 2 : 1);
					if (index % 4 === 1) await script.agency(roomId);
				}
				for (let count = 0; count < 3; count++) await script.newInvitation();
				for (const invitation of env ? [invitations[7], invitations[17]] : [invitations[9], invitations[19]]) await script.statusChange(invitation.invite.uid);
			});
			const rowsBeforeRestart = (await crmCount()) - crmBefore;

			if (variantWhileDown) await postJson(`${sandbox.origin}/_sandbox/variants`, variantWhileDown);
			await script.client({ roomId: rooms[0] }, `While the main is down (${tag})`);
			await script.client({ roomId: rooms[rooms.length - 1] }, `While the main is down (${tag}), twice`, 2);
			await script.client({ newRoom: true }, `While the main is down (${tag}), a new client`);
			await script.client({ roomId: seeded[58].roomId }, `While the main is down (${tag}), an old room`);
			await script.agency(rooms[1]);
			await script.newInvitation();
			await script.statusChange((env ? invitations[27] : invitations[29]).invite.uid);

			const restartedAt = Date.now();
			await topology().main.restart(env);
			const restartMs = Date.now() - restartedAt;
			// The durable scheduler: past the killed poll's lease (60 s) and the reaper's next pass (every 30 s), when a poll task taken up again would have run.
			const arrivedMs = await expectEachOnce(script.expected, crmBefore, 240_000, env ? killedAt + 95_000 : 0);
			return {
				clientMessages: script.expected.messages.length,
				invitationEvents: script.expected.invitations.length,
				rowsBeforeTheMainWasBack: rowsBeforeRestart,
				mainRestartMs: restartMs,
				msFromTheMainBeingBackToEveryRow: arrivedMs,
				runsPerWorker: await expectRunsOnWorkers(runsBefore, script.expected),
			};
		}

		it("n8n's default poller: each event runs once (the sandbox switched to the readings of OTHER_VARIANT while the main is down)", async () => {
			await waitForPolls(1);
			figures['SIGKILL, default poller'] = await killAndRecover(OTHER_VARIANT);
		});

		it("n8n's durable poll scheduler (same variant): the main restarted onto it takes the triggers' state over, then each event runs once", async () => {
			await topology().main.restart(DURABLE_SCHEDULER);
			await waitFor("the durable scheduler's cursors of both triggers", durableCursors, (seqs) => Object.keys(seqs).length === 2);
			const cursorsBefore = await durableCursors();
			await waitForPolls(2);

			// The switch neither repeats nor loses: a message and a status change right after it run once each.
			const crmBefore = await crmCount();
			const runsBefore = await runCounts();
			const script = events();
			await script.client({ roomId: sandbox.state.rooms[12].roomId }, 'After the switch to the durable scheduler');
			await script.statusChange(sandbox.state.invitations[35].invite.uid);
			await expectEachOnce(script.expected, crmBefore);
			await expectRunsOnWorkers(runsBefore, script.expected);
			// The scheduler committed the polls' state.
			const cursorsAfter = await durableCursors();
			expect(cursorsAfter[WORKFLOWS.messages]).toBeGreaterThan(cursorsBefore[WORKFLOWS.messages]);
			expect(cursorsAfter[WORKFLOWS.invitations]).toBeGreaterThan(cursorsBefore[WORKFLOWS.invitations]);

			figures['SIGKILL, durable poll scheduler'] = await killAndRecover(undefined, DURABLE_SCHEDULER);
			figures['durable cursors (seq) before, after the switch, at the end'] = { before: cursorsBefore, afterTheSwitch: cursorsAfter, end: await durableCursors() };
		}, 900_000);
	});
});
