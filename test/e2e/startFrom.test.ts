/**
 * Start From: A Date in a real n8n (the selected version), the packed package installed as a community
 * package: the three polling triggers published with a date 20 days back against a sandbox holding
 * thousands of messages, hundreds of proposals and invitations since then. Every item since the date
 * reaches the CRM once, the live changes made during the backfill with the next polls, and n8n
 * interrupted in the middle of a poll of the backfill loses and repeats nothing: the durable poll
 * scheduler (2.37 and later) killed with SIGKILL; the default poller stopped with SIGTERM, then, later
 * in the same backfill, killed with SIGKILL.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';

import { startSandbox, type Sandbox } from '../../sandbox';
import { buildPackage, installIntoN8n, sandboxCredential } from '../../scripts/n8n/agencyInbox';
import { ensureN8n, startN8n, type RunningN8n } from '../../scripts/n8n/harness';
import { SELECTED_N8N_VERSION, n8nMajorVersion } from '../../scripts/n8n/install';
import { makeTempDir, removeTempDir } from '../../scripts/tempDirs';
import { DURABLE_SCHEDULER, E2E_N8N_ENV, crmPollingWorkflow } from './pollingN8n';
import { LoopbackProxy } from '../nodes/AgencyInboxProposalTrigger/loopbackProxy';
import { KINDS, RoomReadHold, crmRows, keysOf, liveClientMessage, liveInvitation, makeHistory, owedHistory, progressFigures, startFromTriggers, waitForEveryKey, type Kind } from './startFromHistory';
import { sleep, waitFor } from './support';

const n8nVersion = SELECTED_N8N_VERSION;
const SETUP_TIMEOUT_MS = 20 * 60_000;
const MESSAGE_POLL_SKIPPED = 'Agency Inbox Message Trigger: poll skipped, the previous poll of this trigger is still running';
/** The messages in the CRM before each interruption (the backfill hands on at most 100 a poll). */
const MESSAGES_BEFORE = [300, 800];

/**
 * n8n's two pollers, each interrupted in the middle of a poll of the backfill. The default poller starts
 * a poll while the one before still runs: with `overlapping`, room reads are slowed for a while, so the
 * backfill's polls outlast the 3 s between them.
 */
const SETUPS = [
	{ poller: "n8n's durable poll scheduler", env: DURABLE_SCHEDULER, interruptions: ['SIGKILL'], overlapping: false, run: n8nMajorVersion(n8nVersion) >= 2 },
	{ poller: "n8n's default poller", env: {}, interruptions: ['SIGTERM', 'SIGKILL'], overlapping: true, run: true },
] as const;

describe.each(SETUPS.filter((setup) => setup.run))(`Start From in a real n8n ${n8nVersion}, $poller`, ({ env, interruptions, overlapping }) => {
	let sandbox: Sandbox;
	let proxy: LoopbackProxy;
	let hold: RoomReadHold;
	let n8n: RunningN8n | undefined;
	let workDir: string;
	let history: Awaited<ReturnType<typeof makeHistory>>;

	beforeAll(async () => {
		const progress = (line: string) => process.stderr.write(`${line}\n`);
		await Promise.all([buildPackage(progress), ensureN8n(n8nVersion, progress)]);
		sandbox = await startSandbox({ requestsPerMinute: 0, pageSize: 25 });
		proxy = new LoopbackProxy(sandbox.origin);
		hold = new RoomReadHold(proxy);
		await proxy.start();
		history = await makeHistory(sandbox.origin, { messages: 4_000, invitations: 180, proposals: 240 });
		workDir = makeTempDir('e2e-start-from');
		const userFolder = path.join(workDir, 'n8n');
		const all = startFromTriggers(history.startDate).map(({ kind, trigger, row }) =>
			crmPollingWorkflow({ id: `e2eStartFrom${kind.slice(0, 3)}1`, name: `E2E: Start From, ${kind}s`, trigger, row, sandboxOrigin: sandbox.origin }),
		);
		const credential = sandboxCredential({ ...sandbox, url: `${proxy.origin}/service`, origin: proxy.origin }, 600);
		await installIntoN8n({ userFolder, n8nVersion, credentials: [credential], workflows: all, publish: all.map((workflow) => workflow.id) });
		n8n = await startN8n({ userFolder, env: { ...E2E_N8N_ENV, ...env } });
	}, SETUP_TIMEOUT_MS);

	afterAll(async () => {
		await n8n?.stop();
		await proxy?.close();
		await sandbox?.close();
		if (workDir) removeTempDir(workDir);
	});

	/** Room reads slowed to 4 s until 150 more messages and the live one are in the CRM: polls overlapped, and the guard skipped them. */
	async function withOverlappingPolls(liveMessage: string) {
		const logFrom = (await fs.readFile(n8n!.logFile, 'utf8')).length;
		const before = keysOf(await crmRows(sandbox.origin), 'message').length;
		hold.slowReadsMs = 4_000;
		try {
			await waitFor('150 more messages and the live one, against slow room reads', () => crmRows(sandbox.origin), (rows) => keysOf(rows, 'message').length >= before + 150 && keysOf(rows, 'message').includes(liveMessage), 5 * 60_000);
		} finally {
			hold.slowReadsMs = 0;
		}
		const log = (await fs.readFile(n8n!.logFile, 'utf8')).slice(logFrom);
		expect(log).toContain(MESSAGE_POLL_SKIPPED);
	}

	it(`hands on every item since the date once, beside the live ones, ${overlapping ? 'with polls overlapping for a while, ' : ''}across ${interruptions.join(' then ')} in the middle of the backfill`, async () => {
		const owed = owedHistory(sandbox, history.startDateMs, history.historyEndMs);
		expect(owed.message.length).toBeGreaterThan(MESSAGES_BEFORE[MESSAGES_BEFORE.length - 1] + 300);
		const live = { message: [] as string[], invitation: [] as string[] };
		for (const [index, interruption] of interruptions.entries()) {
			await waitFor('part of the history in the CRM', () => crmRows(sandbox.origin), (rows) => keysOf(rows, 'message').length >= MESSAGES_BEFORE[index], 10 * 60_000);
			if (index === 0) live.message.push(await liveClientMessage(sandbox.origin, 'room-007'));
			if (index === 0 && overlapping) await withOverlappingPolls(live.message[0]);
			await hold.interruptInTheMiddleOfAPoll(() => (interruption === 'SIGKILL' ? n8n!.kill() : n8n!.stop()));
			process.stderr.write(`Start From (${interruption}): in the CRM when n8n was stopped: ${progressFigures(await crmRows(sandbox.origin), owed)}\n`);
			live.invitation.push(await liveInvitation(sandbox.origin));
			n8n = await startN8n({ userFolder: path.join(workDir, 'n8n'), port: n8n!.port, env: { ...E2E_N8N_ENV, ...env } });
		}

		const expected = Object.fromEntries(KINDS.map((kind) => [kind, [...owed[kind], ...(kind === 'proposal' ? [] : live[kind])].sort()])) as Record<Kind, string[]>;
		const seconds = await waitForEveryKey(sandbox.origin, expected, 10 * 60_000);
		process.stderr.write(`Start From (${interruptions.join(', ')}): the rest within ${seconds} s of the last restart (measured)\n`);
		// Missed poll times are claimed together after a restart: time for any duplicate to arrive.
		await sleep(15_000);
		const rows = await crmRows(sandbox.origin);
		for (const kind of KINDS) expect(keysOf(rows, kind)).toEqual(expected[kind]);
		expect(rows.filter((row) => !row.backfilled).map((row) => row.key).sort()).toEqual([...live.message, ...live.invitation].sort());
	});
});
