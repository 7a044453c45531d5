/**
 * What the polling triggers cost in requests of the key's shared budget (20 a minute by default),
 * counted by the sandbox (/_sandbox/requests), through n8n-core's engine. First under the sandbox's
 * default reading of what the spec leaves open, by endpoint:
 *
 * - Message Trigger: a poll when nobody wrote (target: 1 request), and the poll after a burst of new
 *   client messages across k rooms (1 and 2 messages a room; each such poll also reads the proposals
 *   changed since the last one), by endpoint (rooms pages, stories, members, proposal list and lookups); and the poll after an
 *   agency member answered in k rooms (as the auto-reply sample does).
 * - Invitation Trigger: a poll when nothing changed, for the seeded list and for 100, 250 and 1,000
 *   invitations (copies of the seeded ones pushed into the sandbox's state).
 *
 * Then side by side under each reading of SINGLE_READINGS (docs/sandbox.md "Variants"), every reading
 * on a sandbox of its own and a fresh process memory of refused parameters:
 *
 * - Message Trigger, for the seeded 60 rooms and for 500 (rooms a new client opens, added through
 *   /_sandbox/changes): the activation poll and the polls that read the proposal list through, a poll when nobody wrote, polls after a client message in
 *   1, 5 and 25 rooms whose proposal the trigger looked up before, the first poll after a message in a
 *   room it never looked up (once the proposal list is read through, none is looked up: the changes since the
 *   last poll are read in every poll that reads messages), and the 400s a service that refuses an unnamed
 *   parameter answers once per endpoint after n8n starts.
 * - Invitation Trigger: the activation poll and a poll when nothing changed, for 45 and 1,000 invitations.
 * - The polling auto-reply sample: the requests one client message costs, from the poll that finds it
 *   through Send to the next poll (which reads the reply and emits nothing).
 *
 * Last, the Message Trigger under each order of the room list (`roomSort`, lastSyncedAt with the
 * sandbox's background re-syncs) and with orders switched under the running trigger: the activation,
 * an idle poll and polls after messages in 1 and 5 rooms under the last order, and how many of the
 * client messages written since the activation (far down the list included) it delivered.
 * POLLING_COST_PART=default|readings|orders runs one part.
 *
 * "Share of the budget" is the poll's requests over 20, for a poll every minute. Prints; never fails.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { resetProcessMemory } from '../nodes/shared/processMemory';
import { DEFAULT_VARIANTS, SINGLE_READINGS, startSandbox, type SandboxVariants } from '../sandbox';
import { runNode, TriggerWorkflow } from '../test/helpers/engine';
import { sandboxControl } from '../test/helpers/sandboxControl';
import { proposalsRead } from '../test/nodes/AgencyInboxMessageTrigger/roomProposalsHelpers';

// Under ts-node, Node resolves `….node` to the codex `….node.json` beside it before `….node.ts`.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { AgencyInboxMessageTrigger } = require('../nodes/AgencyInboxMessageTrigger/AgencyInboxMessageTrigger.node.ts') as typeof import('../nodes/AgencyInboxMessageTrigger/AgencyInboxMessageTrigger.node');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { AgencyInboxInvitationTrigger } = require('../nodes/AgencyInboxInvitationTrigger/AgencyInboxInvitationTrigger.node.ts') as typeof import('../nodes/AgencyInboxInvitationTrigger/AgencyInboxInvitationTrigger.node');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { AgencyInbox } = require('../nodes/AgencyInbox/AgencyInbox.node.ts') as typeof import('../nodes/AgencyInbox/AgencyInbox.node');

const BUDGET_PER_MINUTE = 20;
const TARGET_IDLE_REQUESTS = 1;
const ROOM_COUNTS = [1, 5, 10, 25, 50];
const MESSAGES_PER_ROOM = [1, 2];
const INVITATION_COUNTS = [100, 250, 1000];

type Sandbox = Awaited<ReturnType<typeof startSandbox>>;
type Endpoint = 'rooms' | 'stories' | 'members' | 'proposals' | 'invitations' | 'other';

async function control(sandbox: Sandbox, method: string, route: string, body?: unknown) {
	return await sandboxControl<{ data: Array<{ path: string; status: number }> }>(sandbox.origin, method, route, body);
}

function endpointOf(requestPath: string): Endpoint {
	if (/\/v1\/master-inbox\/rooms$/.test(requestPath)) return 'rooms';
	if (/\/v1\/master-inbox\/rooms\/[^/]+\/stories$/.test(requestPath)) return 'stories';
	if (requestPath.endsWith('/v1/agency/members')) return 'members';
	if (/\/v1\/agency\/proposals(\/[^/]+)?$/.test(requestPath)) return 'proposals';
	if (requestPath.endsWith('/v1/agency/invitations')) return 'invitations';
	return 'other';
}

/** The requests of one poll, by endpoint, with the items it emitted. */
async function measuredPoll(sandbox: Sandbox, trigger: TriggerWorkflow) {
	await control(sandbox, 'DELETE', 'requests');
	const started = performance.now();
	const result = await trigger.poll();
	const milliseconds = performance.now() - started;
	const { data } = await control(sandbox, 'GET', 'requests');
	const byEndpoint: Record<Endpoint, number> = { rooms: 0, stories: 0, members: 0, proposals: 0, invitations: 0, other: 0 };
	for (const request of data) byEndpoint[endpointOf(request.path)]++;
	return { total: data.length, byEndpoint, refused: data.filter((request) => request.status === 400).length, items: result?.[0] ?? [], milliseconds };
}

const share = (requests: number) => `${((100 * requests) / BUDGET_PER_MINUTE).toFixed(0)}%`;
const ratio = (requests: number) => `${(requests / TARGET_IDLE_REQUESTS).toFixed(0)}x`;
const cells = (values: Array<string | number>, widths: number[]) => values.map((value, index) => String(value).padStart(widths[index])).join(' | ');

function credentialFor(sandbox: Sandbox) {
	return { agencyInboxApi: { apiKey: sandbox.apiKey, baseUrl: sandbox.url, requestsPerMinute: 1_000_000 } };
}

async function messageTrigger(): Promise<void> {
	const sandbox = await startSandbox({ requestsPerMinute: 0 });
	try {
		resetProcessMemory();
		const rooms = sandbox.state.rooms;
		const trigger = new TriggerWorkflow({ type: 'agencyInboxMessageTrigger', nodeType: new AgencyInboxMessageTrigger(), parameters: {}, credentials: credentialFor(sandbox) });
		const activation = await measuredPoll(sandbox, trigger);
		const proposalPass = { polls: 0, requests: 0 };
		for (; !proposalsRead(trigger); proposalPass.polls++) proposalPass.requests += (await measuredPoll(sandbox, trigger)).total;
		const idle = await measuredPoll(sandbox, trigger);
		console.log(`Message Trigger: ${rooms.length} rooms (all the sandbox has), the service's default page size 20, the trigger asks for 25 rooms a page`);
		console.log(`  activation (first poll, emits nothing): ${activation.total} request(s); then reading the ${sandbox.state.proposals.length} proposals: ${proposalPass.requests} request(s) over ${proposalPass.polls} poll(s)`);
		console.log(`  poll when nobody wrote: ${idle.total} request(s)  (target ${TARGET_IDLE_REQUESTS}: ${idle.total <= TARGET_IDLE_REQUESTS ? 'met' : 'NOT met'}; ${ratio(idle.total)} the target; ${share(idle.total)} of the budget)`);
		const widths = [17, 7, 5, 7, 7, 7, 7, 5, 14, 6];
		console.log(`  ${cells(['after', 'rooms k', 'items', 'rooms p', 'stories', 'members', 'proposals', 'total', 'vs idle target', 'budget'], widths)}  [time]`);
		const row = async (label: string, k: number) => {
			const poll = await measuredPoll(sandbox, trigger);
			const { rooms: pages, stories, members, proposals } = poll.byEndpoint;
			console.log(`  ${cells([label, k, poll.items.length, pages, stories, members, proposals, poll.total, ratio(poll.total), share(poll.total)], widths)}  [${poll.milliseconds.toFixed(0)} ms]`);
		};
		for (const perRoom of MESSAGES_PER_ROOM) {
			for (const k of ROOM_COUNTS.filter((count) => count <= rooms.length)) {
				for (const room of rooms.slice(0, k)) {
					for (let message = 0; message < perRoom; message++) await control(sandbox, 'POST', 'changes', { kind: 'clientMessage', roomId: room.roomId, text: `Message ${message + 1}` });
				}
				await row(`${perRoom} client msg/room`, k);
			}
		}
		// An agency member answers in k rooms (as the auto-reply samples do): the next poll reads those rooms and emits nothing.
		for (const k of ROOM_COUNTS.filter((count) => count <= rooms.length)) {
			for (const room of rooms.slice(0, k)) {
				const answer = await fetch(`${sandbox.url}/v1/master-inbox/rooms/${room.roomId}/stories`, {
					method: 'POST',
					headers: { authorization: `Bearer ${sandbox.apiKey}`, 'content-type': 'application/json' },
					body: JSON.stringify({ message: 'Thanks, we will reply shortly.', freelancerUid: room.vendorProposal!.userId }),
				});
				if (!answer.ok) throw new Error(`Send Message into ${room.roomId} answered ${answer.status}`);
			}
			await row('member reply', k);
		}
		await row('nothing (idle)', 0);
	} finally {
		await sandbox.close();
	}
}

type InvitationRecord = Sandbox['state']['invitations'][number];

/** `count` invitations: the seeded ones, then copies with their own uids and earlier creation times. */
function fillInvitations(sandbox: Sandbox, seeded: InvitationRecord[], count: number): void {
	sandbox.state.invitations.length = 0;
	for (let index = 0; index < count; index++) {
		const copy = structuredClone(seeded[index % seeded.length]);
		if (index >= seeded.length) {
			copy.invite.uid = `inv-copy-${String(index + 1).padStart(5, '0')}`;
			copy.invite.createdAt = new Date(Date.parse(copy.invite.createdAt) - index * 60_000).toISOString();
		}
		sandbox.state.invitations.push(copy);
	}
}

async function invitationTrigger(): Promise<void> {
	const sandbox = await startSandbox({ requestsPerMinute: 0 });
	try {
		resetProcessMemory();
		const seeded = sandbox.state.invitations.map((record) => structuredClone(record));
		console.log('Invitation Trigger (Trigger On: New and Changed Invitations), a poll when nothing changed; the trigger asks for 100 invitations a page');
		const widths = [11, 8, 10, 8, 6];
		console.log(`  ${cells(['invitations', 'requests', 'activation', 'vs 1', 'budget'], widths)}  [time]`);
		for (const count of [seeded.length, ...INVITATION_COUNTS]) {
			fillInvitations(sandbox, seeded, count);
			const trigger = new TriggerWorkflow({
				type: 'agencyInboxInvitationTrigger',
				nodeType: new AgencyInboxInvitationTrigger(),
				parameters: { triggerOn: 'both' },
				credentials: credentialFor(sandbox),
			});
			const activation = await measuredPoll(sandbox, trigger);
			const idle = await measuredPoll(sandbox, trigger);
			if (idle.items.length !== 0) throw new Error(`an idle poll emitted ${idle.items.length} items`);
			console.log(`  ${cells([count, idle.total, activation.total, ratio(idle.total), share(idle.total)], widths)}  [${idle.milliseconds.toFixed(0)} ms]`);
		}
	} finally {
		await sandbox.close();
	}
}

// ---- Under each reading of what the spec leaves open ----

const LARGER_INBOX_ROOMS = 500;
const READING_ROOM_COUNTS = [1, 5, 25];
/** Older rooms that get a client message after the larger inbox's rooms were opened. */
const OLDER_ROOMS_WRITTEN_TO = 10;
/** Messages written before activation in the room of the "long room" column. */
const LONG_ROOM_MESSAGES = 120;
const READING_INVITATION_COUNTS = [45, 1000];
const POLLING_SAMPLE = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'workflows', 'chat-auto-reply-polling.json'), 'utf8')) as {
	nodes: Array<{ name: string; parameters: INodeParameters }>;
};
/** The first words of the sample's reply, which its check "Not an Auto-Reply" compares each message with. */
const REPLY_OPENING = 'Thanks for writing!';

/** A sandbox under one reading, with a fresh process memory of budgets and refused parameters. */
async function underReading<T>(variants: SandboxVariants, measure: (sandbox: Sandbox) => Promise<T>): Promise<T> {
	const sandbox = await startSandbox({ requestsPerMinute: 0, variants });
	resetProcessMemory();
	try {
		return await measure(sandbox);
	} finally {
		await sandbox.close();
	}
}

const messageTriggerOf = (sandbox: Sandbox) =>
	new TriggerWorkflow({ type: 'agencyInboxMessageTrigger', nodeType: new AgencyInboxMessageTrigger(), parameters: {}, credentials: credentialFor(sandbox) });

async function clientMessages(sandbox: Sandbox, roomIds: string[]): Promise<void> {
	for (const roomId of roomIds) await control(sandbox, 'POST', 'changes', { kind: 'clientMessage', roomId, text: 'Can you start Monday?' });
}

/** `count` rooms spread over the list, none of those in `taken`. */
function spreadRooms(sandbox: Sandbox, count: number, taken: string[] = []): string[] {
	const free = sandbox.state.rooms.map((room) => room.roomId).filter((roomId) => !taken.includes(roomId));
	return Array.from({ length: count }, (_, index) => free[Math.floor((index * free.length) / count)]);
}

interface MessageCosts {
	activation: number;
	activationPolls: number;
	idle: number;
	/** After a client message in k rooms whose proposal was looked up before. */
	rooms: number[];
	/** The first poll after a client message in a room never looked up. */
	lookup: number;
	/** After a client message in a room of LONG_ROOM_MESSAGES messages (its proposal looked up before). */
	longRoom: number;
	/** 400s over the whole run (refused parameters, once per endpoint after n8n starts). */
	refused: number;
}

async function messageCostsUnder(variants: SandboxVariants, roomCount: number): Promise<MessageCosts> {
	return await underReading(variants, async (sandbox) => {
		// More rooms: each one a new client opens for a new proposal (with its first message). Then, as in a
		// live inbox, a few older rooms get a message, so the rooms on top were not opened in that order.
		const seededRooms = sandbox.state.rooms.length;
		for (let room = seededRooms; room < roomCount; room++) await control(sandbox, 'POST', 'changes', { kind: 'clientMessage', newRoom: true });
		if (roomCount > seededRooms) await clientMessages(sandbox, spreadRooms(sandbox, OLDER_ROOMS_WRITTEN_TO));
		const longRoom = sandbox.state.rooms[0].roomId;
		for (let written = 0; written < LONG_ROOM_MESSAGES; written += 40) await control(sandbox, 'POST', 'changes', { kind: 'clientMessage', roomId: longRoom, count: 40 });
		const trigger = messageTriggerOf(sandbox);
		let refused = 0;
		const poll = async () => {
			const measured = await measuredPoll(sandbox, trigger);
			refused += measured.refused;
			return measured.total;
		};
		// The activation, and the polls that read the proposal list through (10 pages a poll).
		let activation = await poll();
		let activationPolls = 1;
		for (; !proposalsRead(trigger); activationPolls++) activation += await poll();
		const idle = await poll();
		const measuredRooms = spreadRooms(sandbox, Math.max(...READING_ROOM_COUNTS), [longRoom]);
		const [firstRead, neverLookedUp] = spreadRooms(sandbox, 2, [longRoom, ...measuredRooms]);
		// The first poll that reads messages after n8n starts learns which parameters the service refuses.
		await clientMessages(sandbox, [firstRead]);
		await poll();
		await clientMessages(sandbox, [neverLookedUp]);
		const lookup = await poll();
		// Their proposals looked up once, then measured.
		await clientMessages(sandbox, measuredRooms);
		await poll();
		const rooms: number[] = [];
		for (const k of READING_ROOM_COUNTS) {
			await clientMessages(sandbox, measuredRooms.slice(0, k));
			rooms.push(await poll());
		}
		await clientMessages(sandbox, [longRoom]);
		await poll(); // its proposal looked up
		await clientMessages(sandbox, [longRoom]);
		const longRoomPoll = await poll();
		return { activation, activationPolls, idle, rooms, lookup, longRoom: longRoomPoll, refused };
	});
}

async function invitationCostsUnder(variants: SandboxVariants, count: number): Promise<{ activation: number; idle: number; refused: number }> {
	return await underReading(variants, async (sandbox) => {
		fillInvitations(sandbox, sandbox.state.invitations.map((record) => structuredClone(record)), count);
		const trigger = new TriggerWorkflow({ type: 'agencyInboxInvitationTrigger', nodeType: new AgencyInboxInvitationTrigger(), parameters: { triggerOn: 'both' }, credentials: credentialFor(sandbox) });
		const activation = await measuredPoll(sandbox, trigger);
		const idle = await measuredPoll(sandbox, trigger);
		if (idle.items.length !== 0) throw new Error(`an idle poll emitted ${idle.items.length} items`);
		return { activation: activation.total, idle: idle.total, refused: activation.refused + idle.refused };
	});
}

/**
 * The polling auto-reply sample for one client message: the poll that finds it, "Not an Auto-Reply"
 * (an n8n IF node, restated: someone to reply as, not the sample's own reply), Send Auto-Reply as saved,
 * and the next poll, which reads the reply. In a room whose proposal was looked up before, and in one never looked up.
 */
async function autoReplyCostsUnder(variants: SandboxVariants): Promise<{ lookedUp: number; neverLookedUp: number; repliesAnswered: number }> {
	return await underReading(variants, async (sandbox) => {
		const trigger = messageTriggerOf(sandbox);
		const send = POLLING_SAMPLE.nodes.find((node) => node.name === 'Send Auto-Reply')!.parameters;
		let repliesAnswered = 0;
		const cycle = async (roomId: string) => {
			await clientMessages(sandbox, [roomId]);
			const found = await measuredPoll(sandbox, trigger);
			await control(sandbox, 'DELETE', 'requests');
			for (const { json } of found.items) {
				const item = json as IDataObject & { room: { replyAs: { uid: string } | null }; message: { text: string } };
				if (!item.room.replyAs?.uid || item.message.text.startsWith(REPLY_OPENING)) continue;
				const reply = await runNode({ type: 'agencyInbox', nodeType: new AgencyInbox(), parameters: send, credentials: credentialFor(sandbox) }, [item]);
				if (reply.error) throw reply.error;
			}
			const sent = (await control(sandbox, 'GET', 'requests')).data.length;
			const next = await measuredPoll(sandbox, trigger);
			repliesAnswered += next.items.length;
			return found.total + sent + next.total;
		};
		await measuredPoll(sandbox, trigger);
		const [warmUp, lookedUp, neverLookedUp] = spreadRooms(sandbox, 3);
		await cycle(warmUp); // refused parameters learnt
		await cycle(lookedUp);
		return { lookedUp: await cycle(lookedUp), neverLookedUp: await cycle(neverLookedUp), repliesAnswered };
	});
}

async function costsUnderEachReading(): Promise<void> {
	const labelWidth = Math.max(...SINGLE_READINGS.map(({ label }) => label.length));
	const row = (label: string, values: Array<string | number>, widths: number[]) => console.log(`  ${label.padEnd(labelWidth)} | ${cells(values, widths)}`);

	for (const roomCount of [60, LARGER_INBOX_ROOMS]) {
		console.log(`\nMessage Trigger under each reading, ${roomCount} rooms: requests per poll (share of the budget when idle)`);
		const widths = [14, 10, ...READING_ROOM_COUNTS.map(() => 8), 14, 11, 11];
		row('reading', ['activation', 'idle', ...READING_ROOM_COUNTS.map((k) => `${k} room${k > 1 ? 's' : ''}`), '1 room, first', `1 room, ${LONG_ROOM_MESSAGES}+`, '400s (once)'], widths);
		for (const { label, variants } of SINGLE_READINGS) {
			const costs = await messageCostsUnder(variants, roomCount);
			row(label, [costs.activationPolls > 1 ? `${costs.activation} (${costs.activationPolls} polls)` : costs.activation, `${costs.idle} (${share(costs.idle)})`, ...costs.rooms, costs.lookup, costs.longRoom, costs.refused], widths);
		}
	}

	console.log('\nInvitation Trigger under each reading (New and Changed Invitations): requests of the activation poll and of a poll when nothing changed');
	const invitationWidths = READING_INVITATION_COUNTS.flatMap(() => [16, 16]).concat([11]);
	row('reading', [...READING_INVITATION_COUNTS.flatMap((count) => [`${count}: activation`, `${count}: idle`]), '400s (once)'], invitationWidths);
	for (const { label, variants } of SINGLE_READINGS) {
		const values: Array<string | number> = [];
		let refused = 0;
		for (const count of READING_INVITATION_COUNTS) {
			const costs = await invitationCostsUnder(variants, count);
			values.push(costs.activation, `${costs.idle} (${share(costs.idle)})`);
			refused = Math.max(refused, costs.refused);
		}
		row(label, [...values, refused], invitationWidths);
	}

	console.log('\nPolling auto-reply sample under each reading (60 rooms): requests per client message, from the poll that finds it through Send to the next poll');
	const replyWidths = [18, 18, 16];
	row('reading', ['room looked up', 'room not looked up', 'replies answered'], replyWidths);
	for (const { label, variants } of SINGLE_READINGS) {
		const costs = await autoReplyCostsUnder(variants);
		row(label, [costs.lookedUp, costs.neverLookedUp, costs.repliesAnswered], replyWidths);
	}
}

// ---- Under each order of the room list, and orders switched under a running trigger ----

type RoomSort = SandboxVariants['roomSort'];
/** The orders a Message Trigger meets: activated under the first, each next one switched in under it. */
const ORDER_CASES: RoomSort[][] = [
	['lastStoryAt'],
	['lastClientMessageAt'],
	['createdAt'],
	['lastSyncedAt'],
	['lastStoryAt', 'createdAt'],
	['lastStoryAt', 'lastSyncedAt'],
	['lastStoryAt', 'createdAt', 'lastStoryAt'],
	['lastClientMessageAt', 'createdAt'],
];
const ORDER_ROOM_COUNTS = [1, 5];

interface OrderCosts {
	activation: number;
	idle: number;
	/** After a client message in 1 and 5 rooms whose proposal was looked up before. */
	rooms: number[];
	/** Client messages written since the activation (in rooms spread over the list, far down included), delivered once, lost, delivered twice. */
	written: number;
	delivered: number;
	repeated: number;
}

/**
 * A trigger activated under `orders[0]`; under each order (the next ones switched in under it) a client
 * message in rooms spread over the list, far down included, and a poll; then, under the last order, an
 * idle poll and polls after messages in 1 and 5 rooms (their proposals looked up before), measured.
 */
async function orderCostsUnder(orders: RoomSort[], roomCount: number): Promise<OrderCosts> {
	return await underReading({ ...DEFAULT_VARIANTS, roomSort: orders[0] }, async (sandbox) => {
		const seededRooms = sandbox.state.rooms.length;
		for (let room = seededRooms; room < roomCount; room++) await control(sandbox, 'POST', 'changes', { kind: 'clientMessage', newRoom: true });
		if (roomCount > seededRooms) await clientMessages(sandbox, spreadRooms(sandbox, OLDER_ROOMS_WRITTEN_TO));
		const trigger = messageTriggerOf(sandbox);
		const delivered: string[] = [];
		const poll = async () => {
			const measured = await measuredPoll(sandbox, trigger);
			delivered.push(...measured.items.map(({ json }) => String((json.message as IDataObject).storyId)));
			return measured.total;
		};
		const activation = await poll();
		const historyEnd = Math.max(...Object.values(sandbox.state.stories).flatMap((stories) => stories.map((story) => Date.parse(story.createdAt))));
		const measuredRooms = spreadRooms(sandbox, Math.max(...ORDER_ROOM_COUNTS));
		for (const [index, order] of orders.entries()) {
			if (index > 0) await control(sandbox, 'POST', 'variants', { roomSort: order });
			await clientMessages(sandbox, [...spreadRooms(sandbox, 3, measuredRooms), ...(index === 0 ? measuredRooms : [])]);
			await poll();
		}
		await poll();
		const idle = await poll();
		const rooms: number[] = [];
		for (const k of ORDER_ROOM_COUNTS) {
			await clientMessages(sandbox, measuredRooms.slice(0, k));
			rooms.push(await poll());
		}
		await poll();
		const members = new Set(sandbox.state.members.map((member) => member.uid));
		const written = Object.values(sandbox.state.stories)
			.flat()
			.filter((story) => !members.has(story.userId) && Date.parse(story.createdAt) > historyEnd)
			.map((story) => story.storyId);
		return {
			activation,
			idle,
			rooms,
			written: written.length,
			delivered: written.filter((storyId) => delivered.includes(storyId)).length,
			repeated: delivered.length - new Set(delivered).size,
		};
	});
}

async function costsUnderEachOrder(): Promise<void> {
	const labels = ORDER_CASES.map((orders) => orders.join(' → '));
	const labelWidth = Math.max(...labels.map((label) => label.length));
	const widths = [10, 10, ...ORDER_ROOM_COUNTS.map(() => 8), 12, 14];
	for (const roomCount of [60, LARGER_INBOX_ROOMS]) {
		console.log(`\nMessage Trigger under each order of the room list (switched under the running trigger after an arrow), ${roomCount} rooms: requests per poll under the last order`);
		console.log(`  ${'order'.padEnd(labelWidth)} | ${cells(['activation', 'idle', ...ORDER_ROOM_COUNTS.map((k) => `${k} room${k > 1 ? 's' : ''}`), 'per message', 'delivered'], widths)}`);
		for (const [index, orders] of ORDER_CASES.entries()) {
			const costs = await orderCostsUnder(orders, roomCount);
			const perMessage = ((costs.rooms[costs.rooms.length - 1] - costs.idle) / ORDER_ROOM_COUNTS[ORDER_ROOM_COUNTS.length - 1]).toFixed(1);
			const delivered = `${costs.delivered} of ${costs.written}${costs.repeated ? `, ${costs.repeated} twice` : ''}`;
			console.log(`  ${labels[index].padEnd(labelWidth)} | ${cells([costs.activation, `${costs.idle} (${share(costs.idle)})`, ...costs.rooms, perMessage, delivered], widths)}`);
		}
	}
}

async function main() {
	console.log(`Requests per poll, counted by the sandbox; budget: ${BUDGET_PER_MINUTE} requests a minute, a poll every minute`);
	const only = process.env.POLLING_COST_PART;
	if (only === undefined || only === 'default') {
		await messageTrigger();
		await invitationTrigger();
	}
	if (only === undefined || only === 'readings') await costsUnderEachReading();
	if (only === undefined || only === 'orders') await costsUnderEachOrder();
}

main().catch((error: Error) => console.log(`pollingTriggersCost stopped: ${error.stack ?? error.message}`));
