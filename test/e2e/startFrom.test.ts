/**
 * Start From: A Date in a real n8n (the pinned version), the packed package installed as a community
 * package: the three polling triggers published with a date 20 days back against a sandbox holding
 * thousands of messages, hundreds of proposals and invitations since then. Every item since the date
 * reaches the CRM once, the live changes made during the backfill with the next polls, and n8n
 * interrupted in the middle of a poll of the backfill (the durable poll scheduler killed with SIGKILL,
 * the default poller stopped with SIGTERM) loses and repeats nothing.
 */
import path from 'node:path';

import { startSandbox, type Sandbox } from '../../sandbox';
import { NODE_TYPES, buildPackage, installIntoN8n, sandboxCredential } from '../../scripts/n8n/agencyInbox';
import { ensureN8n, startN8n, type RunningN8n } from '../../scripts/n8n/harness';
import { SELECTED_N8N_VERSION, n8nMajorVersion } from '../../scripts/n8n/install';
import { makeTempDir, removeTempDir } from '../../scripts/tempDirs';
import { DURABLE_SCHEDULER, E2E_N8N_ENV, crmPollingWorkflow } from './pollingN8n';
import { LoopbackProxy } from '../nodes/AgencyInboxProposalTrigger/loopbackProxy';
import { getJson, postJson, sleep, waitFor } from './support';

const n8nVersion = SELECTED_N8N_VERSION;
const SETUP_TIMEOUT_MS = 20 * 60_000;
const DAY_MS = 86_400_000;

interface CrmRow {
	kind: 'message' | 'proposal' | 'invitation';
	key: string;
	backfilled: boolean;
}

/** The three triggers, each with Start From: A Date, posting one row per item. */
function workflows(sandboxOrigin: string, startDate: string) {
	const startFrom = { startFrom: 'date', startDate };
	return [
		crmPollingWorkflow({
			id: 'e2eStartFromMsg1',
			name: 'E2E: Start From, client messages',
			trigger: { name: 'Client Message', type: NODE_TYPES.messageTrigger, parameters: startFrom },
			row: "{ kind: 'message', key: $json.message.storyId, backfilled: $json.backfilled }",
			sandboxOrigin,
		}),
		crmPollingWorkflow({
			id: 'e2eStartFromPrp1',
			name: 'E2E: Start From, proposals',
			trigger: { name: 'Proposal Changed', type: NODE_TYPES.proposalTrigger, parameters: { triggerOn: 'both', simplify: true, filters: {}, ...startFrom } },
			row: "{ kind: 'proposal', key: $json.uid + ' ' + $json.updatedAt, backfilled: $json.backfilled }",
			sandboxOrigin,
		}),
		crmPollingWorkflow({
			id: 'e2eStartFromInv1',
			name: 'E2E: Start From, invitations',
			trigger: { name: 'Invitation', type: NODE_TYPES.invitationTrigger, parameters: { triggerOn: 'new', ...startFrom } },
			row: "{ kind: 'invitation', key: $json.invite.uid, backfilled: $json.backfilled }",
			sandboxOrigin,
		}),
	];
}

/** n8n's two pollers: the durable scheduler (2.37 and later) killed, the default one stopped, each in the middle of a poll of the backfill. */
const SETUPS = [
	{ poller: "n8n's durable poll scheduler", env: DURABLE_SCHEDULER, interruption: 'SIGKILL', run: n8nMajorVersion(n8nVersion) >= 2 },
	{ poller: "n8n's default poller", env: {}, interruption: 'SIGTERM', run: true },
] as const;

describe.each(SETUPS.filter((setup) => setup.run))(`Start From in a real n8n ${n8nVersion}, $poller`, ({ env, interruption }) => {
	let sandbox: Sandbox;
	let proxy: LoopbackProxy;
	/** Set by the test: called with each room's messages asked for through the proxy, before it is passed on. */
	let onStoriesRequest: (() => Promise<void>) | undefined;
	let n8n: RunningN8n | undefined;
	let workDir: string;
	let startDateMs: number;
	/** When the history ended: everything the sandbox holds written or changed before this is the backfill's. */
	let historyEndMs: number;

	const crmRows = () => getJson<{ data: CrmRow[] }>(`${sandbox.origin}/_sandbox/crm`).then((answer) => answer.data);
	const change = (body: object) => postJson<{ data: Record<string, unknown> }>(`${sandbox.origin}/_sandbox/changes`, body).then((answer) => answer.data);
	const keys = (rows: CrmRow[], kind: CrmRow['kind']) => rows.filter((row) => row.kind === kind).map((row) => row.key).sort();

	/** What the backfill owes, by kind: the sandbox's own records written or changed between the date and the history's end. */
	function history() {
		const members = new Set(sandbox.state.members.map((member) => member.uid));
		const within = (iso: string | null) => iso !== null && Date.parse(iso) >= startDateMs && Date.parse(iso) <= historyEndMs;
		return {
			message: Object.values(sandbox.state.stories)
				.flat()
				.filter((story) => !members.has(story.userId) && within(story.createdAt))
				.map((story) => story.storyId)
				.sort(),
			proposal: sandbox.state.proposals.filter(({ proposal }) => within(proposal.updatedAt)).map(({ proposal }) => `${proposal.uid} ${proposal.updatedAt}`).sort(),
			invitation: sandbox.state.invitations.filter(({ invite }) => within(invite.createdAt)).map(({ invite }) => invite.uid).sort(),
		};
	}

	beforeAll(async () => {
		const progress = (line: string) => process.stderr.write(`${line}\n`);
		await Promise.all([buildPackage(progress), ensureN8n(n8nVersion, progress)]);
		sandbox = await startSandbox({ requestsPerMinute: 0, pageSize: 25 });
		proxy = new LoopbackProxy(sandbox.origin);
		proxy.beforeForward = async (request) => {
			if (request.path.endsWith('/stories')) await onStoriesRequest?.();
		};
		await proxy.start();
		await change({ kind: 'recentHistory', messages: 4_000, invitations: 180, proposals: 240, days: 30 });
		historyEndMs = Date.now();
		startDateMs = historyEndMs - 20 * DAY_MS;
		workDir = makeTempDir('e2e-start-from');
		const userFolder = path.join(workDir, 'n8n');
		const all = workflows(sandbox.origin, new Date(startDateMs).toISOString());
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

	it(`hands on every item since the date once, beside the live ones, across a ${interruption} in the middle of the backfill`, async () => {
		const owed = history();
		expect(owed.message.length).toBeGreaterThan(1_000);
		// Stopped once part of the messages' history is in the CRM (the backfill hands on at most 100 a poll),
		// in the middle of a poll: a room's messages asked for, held 3 s (the runs before it end), never answered.
		await waitFor('part of the history in the CRM', crmRows, (rows) => keys(rows, 'message').length >= 300, 10 * 60_000);
		const live = await change({ kind: 'clientMessage', roomId: 'room-007', text: 'written during the backfill' });
		let release = () => {};
		const released = new Promise<void>((resolve) => (release = resolve));
		const held = new Promise<void>((resolve) => {
			onStoriesRequest = async () => {
				onStoriesRequest = undefined;
				resolve();
				await released;
			};
		});
		await held;
		await sleep(3_000);
		if (interruption === 'SIGKILL') await n8n!.kill();
		else await n8n!.stop();
		release();
		const atKill = await crmRows();
		const whileDown = await change({ kind: 'newInvitation' });
		n8n = await startN8n({ userFolder: path.join(workDir, 'n8n'), port: n8n!.port, env: { ...E2E_N8N_ENV, ...env } });

		const expected = {
			message: [...owed.message, String(live.storyId)].sort(),
			proposal: owed.proposal,
			invitation: [...owed.invitation, String((whileDown.invite as { uid: string }).uid)].sort(),
		};
		const complete = (rows: CrmRow[]) => (['message', 'proposal', 'invitation'] as const).every((kind) => expected[kind].every((key) => keys(rows, kind).includes(key)));
		const restartedAt = Date.now();
		await waitFor('every item since the date in the CRM', crmRows, complete, 10 * 60_000);
		const figures = (['message', 'proposal', 'invitation'] as const).map((kind) => `${kind}s ${keys(atKill, kind).length} of ${expected[kind].length}`).join(', ');
		process.stderr.write(`Start From (${interruption}): in the CRM when n8n was stopped: ${figures}; the rest within ${((Date.now() - restartedAt) / 1000).toFixed(0)} s of the restart (measured)\n`);
		// Missed poll times are claimed together after a restart: time for any duplicate to arrive.
		await sleep(15_000);
		const rows = await crmRows();
		for (const kind of ['message', 'proposal', 'invitation'] as const) expect(keys(rows, kind)).toEqual(expected[kind]);
		expect(rows.filter((row) => !row.backfilled).map((row) => row.key).sort()).toEqual([String(live.storyId), String((whileDown.invite as { uid: string }).uid)].sort());
	});
});
