/**
 * Start From: A Date in n8n's queue mode (the pinned n8n): Postgres, Redis, one main and two workers; the
 * main polls, the workers run the executions. The three polling triggers are published with a date 20
 * days back against a sandbox holding thousands of messages and hundreds of proposals and invitations
 * since then. The main is killed (SIGKILL) twice in the middle of a poll of the backfill: first under
 * n8n's default poller, then restarted onto the durable poll scheduler, which takes the triggers' state
 * over and is killed in its turn. Every item since the date reaches the CRM once, each run on a worker.
 */
import { startSandbox, type Sandbox } from '../../sandbox';
import { sandboxCredential } from '../../scripts/n8n/agencyInbox';
import { LoopbackProxy } from '../nodes/AgencyInboxProposalTrigger/loopbackProxy';
import { DURABLE_SCHEDULER, crmPollingWorkflow } from '../e2e/pollingN8n';
import { KINDS, RoomReadHold, crmRows, keysOf, liveClientMessage, liveInvitation, makeHistory, owedHistory, progressFigures, startFromTriggers, waitForEveryKey, type Kind } from '../e2e/startFromHistory';
import { finishedExecutions, listExecutions, sleep, waitFor, type ExecutionSummary } from '../e2e/support';
import { SETUP_TIMEOUT_MS, WORKER_NAMES, n8nVersion, startQueueForTests, workersThatRan, type QueueForTests } from './support';

/** The messages in the CRM before each kill of the main (the backfill hands on at most 100 a poll). */
const MESSAGES_BEFORE = [250, 550];
/** After a kill under the durable scheduler: the killed poll's lease (60 s) and the reaper's next pass (every 30 s), when a poll task taken up again would have run. */
const DURABLE_SETTLE_MS = 95_000;

describe(`Start From in n8n ${n8nVersion} queue mode (Postgres, Redis, a main, 2 workers)`, () => {
	let sandbox: Sandbox;
	let proxy: LoopbackProxy;
	let hold: RoomReadHold;
	let queue: QueueForTests | undefined;
	let history: Awaited<ReturnType<typeof makeHistory>>;
	let workflowIds: string[];

	const main = () => queue!.topology.main;

	beforeAll(async () => {
		sandbox = await startSandbox({ requestsPerMinute: 0, pageSize: 25 });
		proxy = new LoopbackProxy(sandbox.origin);
		hold = new RoomReadHold(proxy);
		await proxy.start();
		history = await makeHistory(sandbox.origin, { messages: 3_000, invitations: 120, proposals: 160 });
		const workflows = startFromTriggers(history.startDate).map(({ kind, trigger, row }) =>
			crmPollingWorkflow({ id: `qStartFrom${kind.slice(0, 3)}001`, name: `Queue: Start From, ${kind}s`, trigger, row, sandboxOrigin: sandbox.origin }),
		);
		workflowIds = workflows.map((workflow) => workflow.id);
		const credential = sandboxCredential({ ...sandbox, url: `${proxy.origin}/service`, origin: proxy.origin }, 6_000);
		queue = await startQueueForTests('queue-start-from', {
			credentials: [credential],
			workflows,
			publish: workflowIds,
			webhookProcesses: 0,
			env: { GENERIC_TIMEZONE: 'UTC', N8N_LOG_LEVEL: 'info' },
		});
	}, SETUP_TIMEOUT_MS);

	afterAll(async () => {
		await queue?.topology.stop();
		queue?.removeWorkDir();
		await proxy?.close();
		await sandbox?.close();
	});

	it('hands on every item since the date once, each run on a worker, across two kills of the main in the middle of the backfill (default poller, then the durable scheduler)', async () => {
		const owed = owedHistory(sandbox, history.startDateMs, history.historyEndMs);
		expect(owed.message.length).toBeGreaterThan(MESSAGES_BEFORE[1] + 300);
		const live = { message: [] as string[], invitation: [] as string[] };
		let killedAt = 0;
		for (const [index, pollerAfter] of [DURABLE_SCHEDULER, {}].entries()) {
			await waitFor('part of the history in the CRM', () => crmRows(sandbox.origin), (rows) => keysOf(rows, 'message').length >= MESSAGES_BEFORE[index], 10 * 60_000);
			if (index === 0) live.message.push(await liveClientMessage(sandbox.origin, 'room-007'));
			await hold.interruptInTheMiddleOfAPoll(async () => {
				killedAt = Date.now();
				await main().current.kill();
			});
			process.stderr.write(`Start From in queue mode, kill ${index + 1}: in the CRM: ${progressFigures(await crmRows(sandbox.origin), owed)}\n`);
			live.invitation.push(await liveInvitation(sandbox.origin));
			// The first restart moves the main onto the durable scheduler; the second keeps it there.
			await main().restart(pollerAfter);
		}

		const expected = Object.fromEntries(KINDS.map((kind) => [kind, [...owed[kind], ...(kind === 'proposal' ? [] : live[kind])].sort()])) as Record<Kind, string[]>;
		const seconds = await waitForEveryKey(sandbox.origin, expected, 10 * 60_000);
		process.stderr.write(`Start From in queue mode: the rest within ${seconds} s of the last restart (measured)\n`);
		await sleep(Math.max(15_000, killedAt + DURABLE_SETTLE_MS - Date.now()));
		const rows = await crmRows(sandbox.origin);
		for (const kind of KINDS) expect(keysOf(rows, kind)).toEqual(expected[kind]);
		expect(rows.filter((row) => !row.backfilled).map((row) => row.key).sort()).toEqual([...live.message, ...live.invitation].sort());

		// Every run ended well, on a worker: a kill of the main cuts a poll, never a run.
		const runs: ExecutionSummary[] = [];
		for (const workflowId of workflowIds) {
			const all = await waitFor(`the runs of ${workflowId} to end`, () => listExecutions(main().current.url, main().current.restHeaders, workflowId), (found) => finishedExecutions(found).length === found.length);
			runs.push(...all);
		}
		expect(runs.filter((run) => run.status !== 'success')).toEqual([]);
		// The durable scheduler took each trigger's state over from the default poller's.
		const held = await queue!.topology.infrastructure.postgres.query(`SELECT "workflowId" FROM poller_state WHERE "workflowId" IN (${workflowIds.map((id) => `'${id}'`).join(', ')})`);
		expect(held.split('\n').filter(Boolean).sort()).toEqual([...workflowIds].sort());
		const workers = await waitFor('the worker of every run', () => workersThatRan(queue!.topology, runs), (found) => found.every((worker) => worker !== undefined));
		expect(workers.filter((worker) => !WORKER_NAMES.includes(worker!))).toEqual([]);
	});
});
