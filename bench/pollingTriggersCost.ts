/**
 * What the polling triggers cost in requests of the key's shared budget (20 a minute by default),
 * counted by the sandbox (/_sandbox/requests), through n8n-core's engine:
 *
 * - Message Trigger: a poll when nobody wrote (target: 1 request), and the poll after a burst of new
 *   client messages across k rooms (1 and 2 messages a room), by endpoint (rooms pages, stories,
 *   members); and the poll after an agency member answered in k rooms (as the auto-reply sample does).
 * - Invitation Trigger: a poll when nothing changed, for the seeded list and for 100, 250 and 1,000
 *   invitations (copies of the seeded ones pushed into the sandbox's state).
 *
 * "Share of the budget" is the poll's requests over 20, for a poll every minute. Prints; never fails.
 */
import { resetRequestBudgets } from '../nodes/shared/transport';
import { startSandbox } from '../sandbox';
import { TriggerWorkflow } from '../test/helpers/engine';
import { sandboxControl } from '../test/helpers/sandboxControl';

// Under ts-node, Node resolves `….node` to the codex `….node.json` beside it before `….node.ts`.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { AgencyInboxMessageTrigger } = require('../nodes/AgencyInboxMessageTrigger/AgencyInboxMessageTrigger.node.ts') as typeof import('../nodes/AgencyInboxMessageTrigger/AgencyInboxMessageTrigger.node');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { AgencyInboxInvitationTrigger } = require('../nodes/AgencyInboxInvitationTrigger/AgencyInboxInvitationTrigger.node.ts') as typeof import('../nodes/AgencyInboxInvitationTrigger/AgencyInboxInvitationTrigger.node');

const BUDGET_PER_MINUTE = 20;
const TARGET_IDLE_REQUESTS = 1;
const ROOM_COUNTS = [1, 5, 10, 25, 50];
const MESSAGES_PER_ROOM = [1, 2];
const INVITATION_COUNTS = [100, 250, 1000];

type Sandbox = Awaited<ReturnType<typeof startSandbox>>;
type Endpoint = 'rooms' | 'stories' | 'members' | 'invitations' | 'other';

async function control(sandbox: Sandbox, method: string, path: string, body?: unknown) {
	return await sandboxControl<{ data: Array<{ path: string }> }>(sandbox.origin, method, path, body);
}

function endpointOf(path: string): Endpoint {
	if (/\/v1\/master-inbox\/rooms$/.test(path)) return 'rooms';
	if (/\/v1\/master-inbox\/rooms\/[^/]+\/stories$/.test(path)) return 'stories';
	if (path.endsWith('/v1/agency/members')) return 'members';
	if (path.endsWith('/v1/agency/invitations')) return 'invitations';
	return 'other';
}

/** The requests of one poll, by endpoint, with the items it emitted. */
async function measuredPoll(sandbox: Sandbox, trigger: TriggerWorkflow) {
	await control(sandbox, 'DELETE', 'requests');
	const started = performance.now();
	const result = await trigger.poll();
	const milliseconds = performance.now() - started;
	const { data } = await control(sandbox, 'GET', 'requests');
	const byEndpoint: Record<Endpoint, number> = { rooms: 0, stories: 0, members: 0, invitations: 0, other: 0 };
	for (const request of data) byEndpoint[endpointOf(request.path)]++;
	return { total: data.length, byEndpoint, items: result?.[0].length ?? 0, milliseconds };
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
		resetRequestBudgets();
		const rooms = sandbox.state.rooms;
		const trigger = new TriggerWorkflow({ type: 'agencyInboxMessageTrigger', nodeType: new AgencyInboxMessageTrigger(), parameters: {}, credentials: credentialFor(sandbox) });
		const activation = await measuredPoll(sandbox, trigger);
		const idle = await measuredPoll(sandbox, trigger);
		console.log(`Message Trigger: ${rooms.length} rooms (all the sandbox has), the service's default page size 20, the trigger asks for 25 rooms a page`);
		console.log(`  activation (first poll, emits nothing): ${activation.total} request(s)`);
		console.log(`  poll when nobody wrote: ${idle.total} request(s)  (target ${TARGET_IDLE_REQUESTS}: ${idle.total <= TARGET_IDLE_REQUESTS ? 'met' : 'NOT met'}; ${ratio(idle.total)} the target; ${share(idle.total)} of the budget)`);
		const widths = [17, 7, 5, 7, 7, 7, 5, 14, 6];
		console.log(`  ${cells(['after', 'rooms k', 'items', 'rooms p', 'stories', 'members', 'total', 'vs idle target', 'budget'], widths)}  [time]`);
		const row = async (label: string, k: number) => {
			const poll = await measuredPoll(sandbox, trigger);
			const { rooms: pages, stories, members } = poll.byEndpoint;
			console.log(`  ${cells([label, k, poll.items, pages, stories, members, poll.total, ratio(poll.total), share(poll.total)], widths)}  [${poll.milliseconds.toFixed(0)} ms]`);
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

async function invitationTrigger(): Promise<void> {
	const sandbox = await startSandbox({ requestsPerMinute: 0 });
	try {
		resetRequestBudgets();
		const seeded = sandbox.state.invitations.map((record) => structuredClone(record));
		console.log('Invitation Trigger (Trigger On: New and Changed Invitations), a poll when nothing changed; the trigger asks for 100 invitations a page');
		const widths = [11, 8, 10, 8, 6];
		console.log(`  ${cells(['invitations', 'requests', 'activation', 'vs 1', 'budget'], widths)}  [time]`);
		for (const count of [seeded.length, ...INVITATION_COUNTS]) {
			// Copies of the seeded invitations with their own uids and times (the sandbox lists them by createdAt).
			sandbox.state.invitations.length = 0;
			for (let index = 0; index < count; index++) {
				const copy = structuredClone(seeded[index % seeded.length]);
				if (index >= seeded.length) {
					copy.invite.uid = `inv-copy-${String(index + 1).padStart(5, '0')}`;
					copy.invite.createdAt = new Date(Date.parse(copy.invite.createdAt) - index * 60_000).toISOString();
				}
				sandbox.state.invitations.push(copy);
			}
			const trigger = new TriggerWorkflow({
				type: 'agencyInboxInvitationTrigger',
				nodeType: new AgencyInboxInvitationTrigger(),
				parameters: { triggerOn: 'both' },
				credentials: credentialFor(sandbox),
			});
			const activation = await measuredPoll(sandbox, trigger);
			const idle = await measuredPoll(sandbox, trigger);
			if (idle.items !== 0) throw new Error(`an idle poll emitted ${idle.items} items`);
			console.log(`  ${cells([count, idle.total, activation.total, ratio(idle.total), share(idle.total)], widths)}  [${idle.milliseconds.toFixed(0)} ms]`);
		}
	} finally {
		await sandbox.close();
	}
}

async function main() {
	console.log(`Requests per poll, counted by the sandbox; budget: ${BUDGET_PER_MINUTE} requests a minute, a poll every minute`);
	await messageTrigger();
	await invitationTrigger();
}

main().catch((error: Error) => console.log(`pollingTriggersCost stopped: ${error.stack ?? error.message}`));
