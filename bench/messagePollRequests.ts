/**
 * Requests of the Message Trigger's polls for inboxes of 100, 1,000 and 10,000 rooms under each order
 * of the room list the sandbox offers (the spec sorts by an unnamed "date"), through n8n-core's engine
 * against the sandbox, the sandbox counting. Per case: the activation (n8n awaits it: its requests and
 * whether it was cut at its deadline), an idle poll (nobody wrote; the figure the README states), and a
 * client message in the room listed last: the polls and requests until it is emitted. The node's own
 * budget is lifted so each poll shows what it asks for; at the default 20 requests a minute a poll that
 * asks for more is spread over several (printed as minutes). Prints; never fails.
 */
import type { IDataObject } from 'n8n-workflow';

import { startSandbox, type SandboxVariants } from '../sandbox';
import type { TriggerWorkflow } from '../test/helpers/engine';
import { sandboxControl } from '../test/helpers/sandboxControl';
import { countedMessageTrigger, type LoggedRequest } from './support/messageTrigger';


const ROOM_COUNTS = [100, 1_000, 10_000];
const ORDERS: Array<SandboxVariants['roomSort']> = ['lastStoryAt', 'lastClientMessageAt', 'lastSyncedAt', 'createdAt'];
const DEFAULT_BUDGET_PER_MINUTE = 20;
const IDLE_POLLS = 3;
/** Polls after which a message not yet emitted counts as not reached. */
const MAX_POLLS_FOR_MESSAGE = 60;

type Sandbox = Awaited<ReturnType<typeof startSandbox>>;

const ROOMS_PATH = '/v1/master-inbox/rooms';

const roomListRequests = (requests: LoggedRequest[]) => requests.filter((request) => request.path.endsWith(ROOMS_PATH)).length;

/** The room listed last in `order` now: the one a poll reaches last. */
async function lastListedRoom(sandbox: Sandbox): Promise<string> {
	let cursor: string | undefined;
	let last: string | undefined;
	do {
		const url = new URL(`${sandbox.url}${ROOMS_PATH}`);
		url.searchParams.set('sort', 'date-desc');
		url.searchParams.set('pageSize', '100');
		if (cursor) url.searchParams.set('pageCursor', cursor);
		const page = (await (await fetch(url, { headers: { authorization: `Bearer ${sandbox.apiKey}` } })).json()) as { data: Array<{ roomId: string }>; meta: { nextCursor?: string } };
		last = page.data.at(-1)?.roomId ?? last;
		cursor = page.data.length > 0 ? page.meta.nextCursor : undefined;
	} while (cursor);
	if (!last) throw new Error('the sandbox lists no room');
	return last;
}

interface Figures {
	activation: number;
	activationCut: boolean;
	idle: number[];
	messagePolls: number | undefined;
	messageRequests: number;
}

const stateOf = (trigger: TriggerWorkflow) => (JSON.parse(JSON.stringify(trigger.workflow.staticData)) as Record<string, IDataObject>)['node:Node Under Test']?.messages as IDataObject | undefined;

async function measure(rooms: number, roomSort: SandboxVariants['roomSort']): Promise<Figures> {
	const sandbox = await startSandbox({ requestsPerMinute: 0, rooms, variants: { roomSort } });
	try {
		const { trigger, poll } = countedMessageTrigger(sandbox);
		const activation = await poll();
		const state = stateOf(trigger);
		const activationCut = state !== undefined && Object.keys(state).some((key) => /sweep/i.test(key) && state[key] !== undefined && state[key] !== null);
		// The proposals' full pass runs in the polls after the activation; idle means after it.
		for (let polls = 0; polls < 20; polls++) {
			const index = ((stateOf(trigger)?.proposals as IDataObject | undefined)?.index as IDataObject | undefined) ?? {};
			if (index.pass === undefined && Object.keys(index).length > 0) break;
			await poll();
		}
		const idle: number[] = [];
		for (let count = 0; count < IDLE_POLLS; count++) idle.push((await poll()).requests.length);
		await sandboxControl(sandbox.origin, 'POST', 'changes', { kind: 'clientMessage', roomId: await lastListedRoom(sandbox), text: 'In the room listed last' });
		let messagePolls: number | undefined;
		let messageRequests = 0;
		for (let polls = 1; polls <= MAX_POLLS_FOR_MESSAGE && messagePolls === undefined; polls++) {
			const next = await poll();
			messageRequests += next.requests.length;
			if (next.items.length > 0) messagePolls = polls;
		}
		return { activation: roomListRequests(activation.requests), activationCut, idle, messagePolls, messageRequests };
	} finally {
		await sandbox.close();
	}
}

const cells = (values: Array<string | number>, widths: number[]) => values.map((value, index) => String(value).padStart(widths[index])).join(' | ');
const minutesAtDefault = (requests: number) => Math.max(1, Math.ceil(requests / DEFAULT_BUDGET_PER_MINUTE));

async function main() {
	console.log(`Message Trigger: requests per poll, counted by the sandbox, the node's budget lifted (at the default ${DEFAULT_BUDGET_PER_MINUTE} a minute: minutes)`);
	const widths = [6, 19, 16, 13, 22];
	console.log(`  ${cells(['rooms', 'order', 'activation', 'idle poll', 'message, last room'], widths)}`);
	for (const rooms of ROOM_COUNTS) {
		for (const order of ORDERS) {
			const figures = await measure(rooms, order);
			const idle = Math.max(...figures.idle);
			const message = figures.messagePolls === undefined ? `not in ${MAX_POLLS_FOR_MESSAGE} polls` : `${figures.messagePolls} poll(s), ${figures.messageRequests} req`;
			console.log(
				`  ${cells(
					[rooms, order, `${figures.activation}${figures.activationCut ? ' (cut)' : ''}`, `${idle} (${minutesAtDefault(idle)} min)`, message],
					widths,
				)}`,
			);
		}
	}
	console.log(
		'  activation: room-list requests of the first poll (cut: it stopped at its deadline and the next polls go on); idle poll: every request of the most costly of ' +
			`${IDLE_POLLS} polls when nobody wrote, after the proposals' full pass; message: polls and requests until a client message in the room listed last is emitted`,
	);
}

void main();
