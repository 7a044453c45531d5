/**
 * The Message and Invitation triggers inside a real n8n (the pinned version), with the packed package
 * installed as a community package, each feeding a workflow that posts one CRM row per item: nothing
 * historic at activation; each client message and each invitation change once when made 2, 10 and
 * 30 s after an activation, right after a re-publish, or in a burst right after an activation; two
 * client messages in one room between two polls; polls overlapping against a slow service; a restart;
 * n8n's durable poll scheduler killed with SIGKILL in the middle of a backlog; and the sandbox's
 * non-default readings of what the spec leaves open. Pages hold at most 5 rows, so sweeps span pages.
 * Assertions read the CRM rows (one per event, none more after a settling wait), never timings.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';

import { startSandbox, type Sandbox, type SandboxVariants } from '../../sandbox';
import { NODE_TYPES, buildPackage, installIntoN8n, sandboxCredential } from '../../scripts/n8n/agencyInbox';
import { ensureN8n, setPublished, startN8n, type RunningN8n } from '../../scripts/n8n/harness';
import { SELECTED_N8N_VERSION, n8nMajorVersion } from '../../scripts/n8n/install';
import { makeTempDir, removeTempDir } from '../../scripts/tempDirs';
import { LoopbackProxy } from '../nodes/AgencyInboxProposalTrigger/loopbackProxy';
import { ArrivalWatcher, DURABLE_SCHEDULER, E2E_N8N_ENV, crmPollingWorkflow, latencySummary } from './pollingN8n';
import { getJson, postJson, sleep, waitFor } from './support';

const n8nVersion = SELECTED_N8N_VERSION;
const SETUP_TIMEOUT_MS = 30 * 60_000;
const MESSAGE_POLL_SKIPPED = 'Agency Inbox Message Trigger: poll skipped, the previous poll of this trigger is still running';
const INVITATION_POLL_SKIPPED = 'Agency Inbox Invitation Trigger: poll skipped, the previous poll of this trigger is still running';
/** n8n's debug line at start when its durable scheduler is off (the default). */
const DURABLE_SCHEDULER_OFF = 'Durable scheduler is inactive on this instance';
/**
 * The harshest readings of the spec's open points together: rooms in order of creation (a message moves no
 * room), messages oldest first, invitations in no time order, a room's proposal under a marketplace id,
 * page sizes the spec does not name refused (400), members writing under marketplace user ids, cursors
 * that count rows.
 */
const NON_DEFAULT_VARIANTS: SandboxVariants = {
	roomSort: 'createdAt',
	storyOrder: 'oldestFirst',
	invitationOrder: 'scrambled',
	vendorProposalId: 'marketplaceId',
	unnamedQueryParameters: 'rejected',
	authorIds: 'marketplaceUserId',
	roomRowTimes: 'seconds',
	roomCreation: 'together',
	listCursors: 'offsets',
};
const INVITATION_STATES = ['pending', 'accepted', 'declined'] as const;
/** The seed's rooms come first in the sandbox's list; rooms opened later follow. */
const SEEDED_ROOMS = 60;

/** A Message Trigger workflow and an Invitation Trigger workflow whose CRM rows carry `via`. */
interface Pair {
	via: string;
	messages: string;
	invitations: string;
}
const pair = (index: number, via: string): Pair => ({ via, messages: `e2ePollMsg${String(index).padStart(6, '0')}`, invitations: `e2ePollInv${String(index).padStart(6, '0')}` });
/** Published at import: polls from n8n's first start to the end of the default and durable parts. */
const ALWAYS = pair(1, 'always');
/** Imported unpublished: each is published by its own case, a fresh activation. */
const ACTIVATED_DEFAULT = pair(2, 'activatedDefault');
const BURST_DEFAULT = pair(3, 'burstDefault');
const ACTIVATED_DURABLE = pair(4, 'activatedDurable');
const VARIANTS_DURABLE = pair(5, 'variantsDurable');
const PAIRS = [ALWAYS, ACTIVATED_DEFAULT, BURST_DEFAULT, ACTIVATED_DURABLE, VARIANTS_DURABLE];

interface CrmRow {
	kind: 'message' | 'invitation';
	via: string;
	roomId?: string;
	storyId?: string;
	text?: string;
	uid?: string;
	trigger?: string;
	status?: string;
}
const messageKey = (roomId: string, storyId: string) => `message ${roomId} ${storyId}`;
const invitationKey = (uid: string, trigger: string, status: string) => `invitation ${uid} ${trigger} ${status}`;
const rowKey = (row: CrmRow) => (row.kind === 'message' ? messageKey(row.roomId!, row.storyId!) : invitationKey(row.uid!, row.trigger!, row.status!));

/** One event the triggers must each emit once: its CRM row key, when it was made, and in which step. */
interface Made {
	key: string;
	at: number;
	what: string;
}

interface Story {
	storyId: string;
	createdAt: string;
}
type ClientMessageAnswer = (Story & { roomId: string }) | { roomId: string; stories: Story[] };
interface InvitationAnswer {
	invite: { uid: string; status: string };
}

function pairWorkflows(pairToImport: Pair, sandboxOrigin: string) {
	return [
		crmPollingWorkflow({
			id: pairToImport.messages,
			name: `E2E: one CRM row per client message (${pairToImport.via})`,
			trigger: { name: 'Client Message', type: NODE_TYPES.messageTrigger, parameters: {} },
			row: `{ kind: 'message', via: '${pairToImport.via}', roomId: $json.payload.chat.id, storyId: $json.message.storyId, text: $json.message.text }`,
			sandboxOrigin,
		}),
		crmPollingWorkflow({
			id: pairToImport.invitations,
			name: `E2E: one CRM row per invitation change (${pairToImport.via})`,
			trigger: { name: 'Invitation', type: NODE_TYPES.invitationTrigger, parameters: { triggerOn: 'both' } },
			row: `{ kind: 'invitation', via: '${pairToImport.via}', uid: $json.invite.uid, trigger: $json.trigger, status: $json.invite.status }`,
			sandboxOrigin,
		}),
	];
}

type RequestKind = 'rooms' | 'stories' | 'invitations' | 'members' | 'other';
interface SeenRequest {
	at: number;
	kind: RequestKind;
	pageCursor?: string;
}
function requestKind(requestPath: string): RequestKind {
	if (requestPath.endsWith('/v1/master-inbox/rooms')) return 'rooms';
	if (requestPath.endsWith('/stories')) return 'stories';
	if (requestPath.endsWith('/v1/agency/invitations')) return 'invitations';
	if (requestPath.endsWith('/v1/agency/members')) return 'members';
	return 'other';
}

const occurrences = (text: string, part: string) => text.split(part).length - 1;

describe(`Message and Invitation triggers in a real n8n ${n8nVersion}`, () => {
	let sandbox: Sandbox;
	let proxy: LoopbackProxy;
	let n8n: RunningN8n | undefined;
	let workDir: string;
	let userFolder: string;
	let arrivals: ArrivalWatcher<CrmRow>;
	/** Every request the triggers sent to the service, in order of arrival. */
	const requests: SeenRequest[] = [];
	/** Extra time the service takes to answer a request. */
	let delayOf: (request: SeenRequest) => number = () => 0;
	/** Runs before the request is passed on (and before its delay). */
	let onRequest: ((request: SeenRequest) => Promise<void> | void) | undefined;
	/** Every event made while ALWAYS was published. */
	const madeForAlways: Made[] = [];
	let alwaysPublished = true;
	let nextRoom = 0;
	let nextSeededInvitation = 0;

	const crmRows = () => getJson<{ data: CrmRow[] }>(`${sandbox.origin}/_sandbox/crm`).then((answer) => answer.data);
	const change = <T>(body: object) => postJson<{ data: T }>(`${sandbox.origin}/_sandbox/changes`, body).then((answer) => answer.data);
	const n8nLog = () => fs.readFile(n8n!.logFile, 'utf8');
	const start = async (env: NodeJS.ProcessEnv = {}) => {
		n8n = await startN8n({ userFolder, env: { ...E2E_N8N_ENV, ...env } });
	};
	const publishPair = async (published: boolean, { messages, invitations }: Pair) => {
		await setPublished(n8n!, messages, published);
		await setPublished(n8n!, invitations, published);
	};
	/** Rooms of the seed in turn, so consecutive steps write into different rooms. */
	const rooms = (count: number) => Array.from({ length: count }, () => sandbox.state.rooms[nextRoom++ % SEEDED_ROOMS].roomId);
	const remember = (events: Made[]) => {
		if (alwaysPublished) madeForAlways.push(...events);
		return events;
	};

	/** `count` client messages in one room (or a new room), each its own event. */
	async function clientMessages(what: string, target: { roomId: string } | { newRoom: true }, count = 1): Promise<Made[]> {
		const at = Date.now();
		const answer = await change<ClientMessageAnswer>({ kind: 'clientMessage', ...target, ...(count > 1 && { count }) });
		const stories = 'stories' in answer ? answer.stories : [answer];
		return remember(stories.map((story) => ({ key: messageKey(answer.roomId, story.storyId), at, what })));
	}
	/** A message by an agency member of the room: no event. */
	async function agencyMessage(roomId: string): Promise<Made[]> {
		await change({ kind: 'agencyMessage', roomId, text: `Agency reply in ${roomId}` });
		return [];
	}
	async function newInvitation(what: string): Promise<Made[]> {
		const at = Date.now();
		const { invite } = await change<InvitationAnswer>({ kind: 'newInvitation', title: `E2E job ${what}` });
		return remember([{ key: invitationKey(invite.uid, 'new', invite.status), at, what }]);
	}
	/** A seeded invitation (each one once in the file) moved to the next state. */
	async function invitationStatusChange(what: string): Promise<Made[]> {
		const { invite } = sandbox.state.invitations[nextSeededInvitation++];
		const now = INVITATION_STATES.indexOf(invite.status.toLowerCase() as (typeof INVITATION_STATES)[number]);
		const at = Date.now();
		const changed = await change<InvitationAnswer>({ kind: 'invitationStatus', invitationUid: invite.uid, status: INVITATION_STATES[(now + 1) % INVITATION_STATES.length] });
		return remember([{ key: invitationKey(changed.invite.uid, 'statusChanged', changed.invite.status), at, what }]);
	}

	/**
	 * Waits until every pair named posted a row for each event (rows from CRM row `from` on), lets
	 * `settleMs` pass for any duplicate, then expects exactly one row per event from each.
	 */
	async function expectOnceEach(vias: string[], events: Made[], from: number, { timeoutMs = 120_000, settleMs = 10_000 } = {}): Promise<void> {
		const wanted = events.map((event) => event.key).sort();
		const keysOf = async (via: string) => (await crmRows()).slice(from).filter((row) => row.via === via).map(rowKey);
		await waitFor(
			`a CRM row for each of ${events.length} events from ${vias.join(' and ')}`,
			async () => Promise.all(vias.map(keysOf)),
			(found) => found.every((keys) => wanted.every((key) => keys.includes(key))),
			timeoutMs,
		);
		await sleep(settleMs);
		for (const via of vias) expect({ via, keys: (await keysOf(via)).sort() }).toEqual({ via, keys: wanted });
	}

	const reportLatencies = (label: string, via: string, events: Made[]) =>
		process.stderr.write(`${label} (${via}): ${latencySummary(events.map((event) => ({ madeAt: event.at, arrivedAt: arrivals.firstSeen(`${via} ${event.key}`) })))}\n`);

	beforeAll(async () => {
		const progress = (line: string) => process.stderr.write(`${line}\n`);
		await Promise.all([buildPackage(progress), ensureN8n(n8nVersion, progress)]);
		sandbox = await startSandbox({ requestsPerMinute: 0, maxPageSize: 5 });
		proxy = new LoopbackProxy(sandbox.origin);
		proxy.beforeForward = async (request) => {
			const seen: SeenRequest = { at: Date.now(), kind: requestKind(request.path), pageCursor: request.query.get('pageCursor') ?? undefined };
			requests.push(seen);
			await onRequest?.(seen);
			const delayMs = delayOf(seen);
			if (delayMs) await sleep(delayMs);
		};
		await proxy.start();
		workDir = makeTempDir('e2e-polling');
		userFolder = path.join(workDir, 'n8n');
		await installIntoN8n({
			userFolder,
			n8nVersion,
			credentials: [sandboxCredential({ ...sandbox, url: `${proxy.origin}/service`, origin: proxy.origin }, 10_000)],
			workflows: PAIRS.flatMap((each) => pairWorkflows(each, sandbox.origin)),
			publish: [ALWAYS.messages, ALWAYS.invitations],
		});
		arrivals = new ArrivalWatcher(crmRows, (row) => `${row.via} ${rowKey(row)}`);
		await start();
	}, SETUP_TIMEOUT_MS);

	afterAll(async () => {
		onRequest = undefined;
		delayOf = () => 0;
		await arrivals?.stop();
		await n8n?.stop();
		await proxy?.close();
		await sandbox?.close();
		if (workDir) removeTempDir(workDir);
	});

	/**
	 * Publishes `activated` (a fresh activation), then makes a client message and a new invitation
	 * 2, 10 and 30 s later, unpublishes and re-publishes it and makes a message, a new invitation and
	 * a status change at once: each reaches the CRM once from it (and from the `alsoFrom` pairs).
	 */
	async function changesAfterAnActivation(activated: Pair, alsoFrom: Pair[]): Promise<void> {
		const from = (await crmRows()).length;
		const events: Made[] = [];
		await publishPair(true, activated);
		const activatedAt = Date.now();
		for (const seconds of [2, 10, 30]) {
			await sleep(activatedAt + seconds * 1000 - Date.now());
			const what = `${seconds} s after the activation`;
			events.push(...(await clientMessages(what, { roomId: rooms(1)[0] })), ...(await newInvitation(what)));
		}
		await publishPair(false, activated);
		await publishPair(true, activated);
		const what = 'right after a re-publish';
		events.push(...(await clientMessages(what, { roomId: rooms(1)[0] })), ...(await newInvitation(what)), ...(await invitationStatusChange(what)));
		await expectOnceEach([activated.via, ...alsoFrom.map((each) => each.via)], events, from);
		for (const event of events) reportLatencies(`${event.key}, made ${event.what}`, activated.via, [event]);
		await publishPair(false, activated);
	}

	/**
	 * Publishes `activated` and at once, in four waves 0.5 s apart, writes 36 client messages into 17
	 * rooms (8 rooms get two in one change, 10 a second change later, one room is new), agency
	 * messages into 5 rooms (one without any client message), 5 new invitations and 2 status changes.
	 */
	async function burstRightAfterAnActivation(activated: Pair, alsoFrom: Pair[]): Promise<void> {
		const from = (await crmRows()).length;
		await publishPair(true, activated);
		const what = 'in the burst';
		const target = rooms(17);
		const waves: Array<Array<() => Promise<Made[]>>> = [
			[...target.slice(0, 8).map((roomId) => () => clientMessages(what, { roomId }, 2)), () => agencyMessage(target[0]), () => agencyMessage(target[1])],
			[
				...target.slice(8, 16).map((roomId) => () => clientMessages(what, { roomId })),
				() => clientMessages(what, { newRoom: true }, 2),
				() => agencyMessage(target[16]),
				...[1, 2, 3].map(() => () => newInvitation(what)),
			],
			[...target.slice(0, 6).map((roomId) => () => clientMessages(what, { roomId })), () => agencyMessage(target[8]), () => invitationStatusChange(what), () => invitationStatusChange(what)],
			[...target.slice(10, 14).map((roomId) => () => clientMessages(what, { roomId })), () => agencyMessage(target[2]), () => newInvitation(what), () => newInvitation(what)],
		];
		const events: Made[] = [];
		const burstStartedAt = Date.now();
		for (const [index, wave] of waves.entries()) {
			await sleep(burstStartedAt + index * 500 - Date.now());
			for (const made of await Promise.all(wave.map((make) => make()))) events.push(...made);
		}
		process.stderr.write(`burst (${activated.via}): ${events.length} events made in ${Date.now() - burstStartedAt} ms after the activation\n`);
		expect(events.filter((event) => event.key.startsWith('message')).length).toBe(36);
		// Late is acceptable, lost or doubled is not: under the harshest readings every poll reads every page
		// of rooms and of each room's messages (pages of 5), on a machine running four suites at once.
		await expectOnceEach([activated.via, ...alsoFrom.map((each) => each.via)], events, from, { timeoutMs: 420_000 });
		reportLatencies('burst right after an activation, client messages', activated.via, events.filter((event) => event.key.startsWith('message')));
		reportLatencies('burst right after an activation, invitations', activated.via, events.filter((event) => event.key.startsWith('invitation')));
	}

	/** Two client messages written into one room while the next poll is on its way to the room list. */
	async function twoMessagesInOneRoomBetweenPolls(vias: string[]): Promise<void> {
		const from = (await crmRows()).length;
		const [roomId] = rooms(1);
		const what = 'two in one room between two polls';
		const events = await new Promise<Made[]>((resolve, reject) => {
			onRequest = async (request) => {
				if (request.kind !== 'rooms' || request.pageCursor) return;
				onRequest = undefined;
				try {
					resolve([...(await clientMessages(what, { roomId })), ...(await clientMessages(what, { roomId }))]);
				} catch (error) {
					reject(error);
				}
			};
		});
		expect(new Set(events.map((event) => event.key)).size).toBe(2);
		await expectOnceEach(vias, events, from, { settleMs: 8_000 });
		reportLatencies(what, vias[0], events);
	}

	/**
	 * With the durable scheduler: 25 rooms get a client message, and 6 new invitations and 3 status
	 * changes come with them; stories take 1 s each, and n8n is killed (SIGKILL) when the 8th stories
	 * request of the backlog arrives. While it is down a message and an invitation more; after a
	 * restart each event reaches the CRM once, and 15 s more bring no duplicate.
	 */
	async function backlogKilledMidSweep(vias: string[]): Promise<void> {
		const polledFrom = requests.length;
		await waitFor('a durable poll', async () => requests.slice(polledFrom).filter((request) => request.kind === 'rooms').length, (count) => count > 1);
		const from = (await crmRows()).length;
		const what = 'in the backlog';
		const backlog = (
			await Promise.all([
				...rooms(25).map((roomId) => clientMessages(what, { roomId })),
				...Array.from({ length: 6 }, () => newInvitation(what)),
				...Array.from({ length: 3 }, () => invitationStatusChange(what)),
			])
		).flat();
		delayOf = (request) => (request.kind === 'stories' ? 1_000 : 0);
		let storiesOfBacklog = 0;
		await new Promise<void>((resolve) => {
			onRequest = (request) => {
				if (request.kind === 'stories' && ++storiesOfBacklog === 8) {
					onRequest = undefined;
					resolve();
				}
			};
		});
		await n8n!.kill();
		delayOf = () => 0;
		const inCrmAtKill = (await crmRows()).slice(from).filter((row) => row.via === vias[0]);
		process.stderr.write(
			`SIGKILL (${vias[0]}): at the kill the CRM held ${inCrmAtKill.filter((row) => row.kind === 'message').length} of 25 backlog messages and ` +
				`${inCrmAtKill.filter((row) => row.kind === 'invitation').length} of 9 invitation changes\n`,
		);
		const whileDown = [...(await clientMessages('while n8n was down', { roomId: rooms(1)[0] })), ...(await newInvitation('while n8n was down'))];
		await start(DURABLE_SCHEDULER);
		await expectOnceEach(vias, [...backlog, ...whileDown], from, { timeoutMs: 420_000, settleMs: 15_000 });
		reportLatencies('backlog, SIGKILL and restart', vias[0], backlog);
		reportLatencies('made while n8n was down', vias[0], whileDown);
	}

	describe('default poller', () => {
		it('starts nothing for the messages and invitations that existed before the activation', async () => {
			const polls = () => ({
				rooms: requests.filter((request) => request.kind === 'rooms' && !request.pageCursor).length,
				invitations: requests.filter((request) => request.kind === 'invitations' && !request.pageCursor).length,
			});
			await waitFor('four polls of each trigger', async () => polls(), (count) => count.rooms >= 4 && count.invitations >= 4, 180_000);
			await sleep(2_000);
			expect(await crmRows()).toEqual([]);
			expect(await n8nLog()).toContain(DURABLE_SCHEDULER_OFF);
		});

		it('emits each message and invitation made 2, 10 and 30 s after an activation, and right after a re-publish, once', async () => {
			await changesAfterAnActivation(ACTIVATED_DEFAULT, [ALWAYS]);
		});

		it('emits each of 36 client messages in 17 rooms and each invitation change of a burst right after an activation once, and nothing for agency messages', async () => {
			await burstRightAfterAnActivation(BURST_DEFAULT, [ALWAYS]);
			await publishPair(false, BURST_DEFAULT);
		});

		it('emits both of two client messages written into one room between two polls', async () => {
			await twoMessagesInOneRoomBetweenPolls([ALWAYS.via]);
		});

		it('emits each change once when polls overlap against a slow service, and skips the overlapping polls', async () => {
			const from = (await crmRows()).length;
			const logFrom = (await n8nLog()).length;
			// Every rooms and stories request, and the first invitations page, take 4 s; polls start every 3 s.
			delayOf = (request) => (request.kind === 'rooms' || request.kind === 'stories' || (request.kind === 'invitations' && !request.pageCursor) ? 4_000 : 0);
			const events: Made[] = [];
			try {
				for (const [index, roomId] of rooms(3).entries()) {
					const what = `against a slow service, #${index + 1}`;
					events.push(...(await clientMessages(what, { roomId })), ...(await newInvitation(what)));
					await sleep(3_000);
				}
				events.push(...(await invitationStatusChange('against a slow service')));
				await expectOnceEach([ALWAYS.via], events, from, { timeoutMs: 180_000 });
			} finally {
				delayOf = () => 0;
			}
			reportLatencies('against a slow service', ALWAYS.via, events);
			const log = (await n8nLog()).slice(logFrom);
			process.stderr.write(
				`against a slow service: "poll skipped, the previous poll … still running" ${occurrences(log, MESSAGE_POLL_SKIPPED)} times for the Message Trigger, ` +
					`${occurrences(log, INVITATION_POLL_SKIPPED)} times for the Invitation Trigger\n`,
			);
			expect(log).toContain(MESSAGE_POLL_SKIPPED);
		});

		it('emits the messages and invitation changes made while n8n was stopped once after its restart', async () => {
			const from = (await crmRows()).length;
			await n8n!.stop();
			const what = 'while n8n was stopped';
			const [oneRoom, twoRoom] = rooms(2);
			const events = [
				...(await clientMessages(what, { roomId: oneRoom })),
				...(await clientMessages(what, { roomId: twoRoom }, 2)),
				...(await newInvitation(what)),
				...(await invitationStatusChange(what)),
			];
			await start();
			await expectOnceEach([ALWAYS.via], events, from);
			reportLatencies('made while n8n was stopped (downtime included)', ALWAYS.via, events);
		});
	});

	// n8n 1.x has no durable poll scheduler.
	(n8nMajorVersion(n8nVersion) >= 2 ? describe : describe.skip)("n8n's durable poll scheduler", () => {
		it('emits each message and invitation made 2, 10 and 30 s after an activation, and right after a re-publish, once', async () => {
			await n8n!.stop();
			const logFrom = (await n8nLog()).length;
			await start(DURABLE_SCHEDULER);
			expect((await n8nLog()).slice(logFrom)).not.toContain(DURABLE_SCHEDULER_OFF);
			await changesAfterAnActivation(ACTIVATED_DURABLE, [ALWAYS]);
		});

		it('emits a backlog once after a SIGKILL in the middle of reading it, and what was made while n8n was down', async () => {
			await backlogKilledMidSweep([ALWAYS.via]);
		});

		it('posted exactly one row per event of this file through the workflows published since the first start', async () => {
			const keys = (await crmRows()).filter((row) => row.via === ALWAYS.via).map(rowKey);
			expect(keys.sort()).toEqual(madeForAlways.map((event) => event.key).sort());
			process.stderr.write(`${ALWAYS.via}: ${keys.length} rows for ${madeForAlways.length} events across restarts, a SIGKILL and both schedulers\n`);
		});

		describe(`under the sandbox's other readings ${JSON.stringify(NON_DEFAULT_VARIANTS)}`, () => {
			beforeAll(async () => {
				// A cursor of one reading is refused under another: only idle triggers see the switch.
				await publishPair(false, ALWAYS);
				alwaysPublished = false;
				await sleep(4_000);
				await postJson(`${sandbox.origin}/_sandbox/variants`, NON_DEFAULT_VARIANTS);
			});

			it('emits each client message and invitation change of a burst right after an activation once, and nothing for agency messages', async () => {
				await burstRightAfterAnActivation(VARIANTS_DURABLE, []);
			});

			it('emits both of two client messages written into one room between two polls', async () => {
				await twoMessagesInOneRoomBetweenPolls([VARIANTS_DURABLE.via]);
			});

			it('emits a backlog once after a SIGKILL in the middle of reading it, and what was made while n8n was down', async () => {
				await backlogKilledMidSweep([VARIANTS_DURABLE.via]);
			});
		});
	});
});
