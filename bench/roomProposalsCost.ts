/**
 * What the Message Trigger's rooms' proposals cost (payload.proposal from the proposals whose chatRoomId
 * is the room, nodes/AgencyInboxMessageTrigger/roomProposal.ts), through n8n-core's engine against the
 * sandbox, for 100, 1,000 and 10,000 proposals, in two shapes of inbox: the sandbox's 60 rooms (many
 * proposals a room) and one room per proposal (the most rooms the index must keep). And at two page
 * sizes: the trigger asks for 100 proposals a page (`pageSize`, a parameter the spec does not name),
 * and the sandbox's own 20 where the service ignores it.
 *
 * Per case: the requests of the activation poll; the polls after it and the requests of the full pass
 * (rule 5's bootstrap, at most 10 pages a poll); the minutes that takes at a poll every minute; a poll when nobody
 * wrote and the poll after a client message, once the list is read through; the bytes of the node's
 * static data (under n8n's durable poll scheduler the poll cursor committed with every execution) and of
 * its proposals part, and the time to write and read it as JSON. With one room per proposal past 2,000
 * proposals the index keeps the rooms whose proposals changed last: a message in a room it dropped costs
 * the lookup of the room's vendorProposal.id. Counted by the sandbox. Prints; never fails.
 */
import type { IDataObject } from 'n8n-workflow';

import { MAX_PROPOSALS_KEPT } from '../nodes/AgencyInboxMessageTrigger/proposalIndex';
import { MAX_PAGES_PER_POLL } from '../nodes/AgencyInboxMessageTrigger/roomProposal';
import { startSandbox, type SandboxVariants } from '../sandbox';
import type { TriggerWorkflow } from '../test/helpers/engine';
import { sandboxControl } from '../test/helpers/sandboxControl';
import { countedMessageTrigger } from './support/messageTrigger';


const PROPOSAL_COUNTS = [100, 1_000, 10_000];
const BUDGET_PER_MINUTE = 20;
const TARGET_IDLE_REQUESTS = 1;

type Sandbox = Awaited<ReturnType<typeof startSandbox>>;

interface Case {
	proposals: number;
	rooms: number;
	pageSize: 'asked 100' | "service's 20";
}


const stateOf = (trigger: TriggerWorkflow) => (JSON.parse(JSON.stringify(trigger.workflow.staticData)) as Record<string, IDataObject>)['node:Node Under Test'];
const passDone = (trigger: TriggerWorkflow) => {
	const index = ((stateOf(trigger)?.messages as IDataObject | undefined)?.proposals as IDataObject | undefined)?.index as IDataObject | undefined;
	return index !== undefined && index.pass === undefined;
};
const kilobytes = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

async function measure({ proposals, rooms, pageSize }: Case) {
	const variants: Partial<SandboxVariants> = pageSize === 'asked 100' ? {} : { unnamedQueryParameters: 'ignored' };
	const sandbox = await startSandbox({ requestsPerMinute: 0, proposals, rooms, variants });
	try {
		const { trigger, poll } = countedMessageTrigger(sandbox);
		const activation = await poll();
		let polls = 0;
		let passRequests = 0;
		while (!passDone(trigger)) {
			const next = await poll();
			polls++;
			passRequests += next.requests.filter((request) => request.path.endsWith('/v1/agency/proposals')).length;
		}
		const idle = await poll();
		// A client message in the room whose proposal changed last (kept), then in the one whose changed first.
		const newest = newestUpdatePerRoom(sandbox);
		const byNewest = [...sandbox.state.rooms].sort((a, b) => (newest.get(b.roomId) ?? -Infinity) - (newest.get(a.roomId) ?? -Infinity));
		await sandboxControl(sandbox.origin, 'POST', 'changes', { kind: 'clientMessage', roomId: byNewest[0].roomId, text: 'Kept room' });
		const message = await poll();
		await sandboxControl(sandbox.origin, 'POST', 'changes', { kind: 'clientMessage', roomId: byNewest[byNewest.length - 1].roomId, text: 'Oldest room' });
		const oldest = await poll();
		const staticData = trigger.workflow.staticData;
		const started = performance.now();
		const json = JSON.stringify(staticData);
		JSON.parse(json);
		const jsonMs = performance.now() - started;
		const proposalsPart = JSON.stringify((stateOf(trigger).messages as IDataObject).proposals);
		const index = JSON.parse(proposalsPart) as { index: { rooms: Record<string, { p: unknown[] }> } };
		return {
			activation: activation.requests.length,
			polls,
			passRequests,
			minutes: polls, // one poll a minute after the activation: 1 + 10 requests each, within 20 a minute
			idle: idle.requests.length,
			message: message.requests.length,
			messageProposal: (message.items[0]?.json.payload as IDataObject | undefined)?.proposal ? 'index' : 'none',
			oldest: oldest.requests.length,
			oldestProposal: (oldest.items[0]?.json.notice as string | undefined) === undefined ? 'index' : (oldest.items[0]?.json.payload as IDataObject).proposal ? 'lookup' : 'none',
			roomsKept: Object.keys(index.index.rooms).length,
			proposalsKept: Object.values(index.index.rooms).reduce((sum, room) => sum + room.p.length, 0),
			staticBytes: Buffer.byteLength(json),
			proposalsBytes: Buffer.byteLength(proposalsPart),
			jsonMs,
		};
	} finally {
		await sandbox.close();
	}
}

/** The latest updatedAt of each room's proposals (none: before every time). */
function newestUpdatePerRoom(sandbox: Sandbox): Map<string, number> {
	const newest = new Map<string, number>();
	for (const { proposal } of sandbox.state.proposals) {
		if (proposal.chatRoomId === null) continue;
		const time = proposal.updatedAt === null ? -Infinity : Date.parse(proposal.updatedAt);
		newest.set(proposal.chatRoomId, Math.max(newest.get(proposal.chatRoomId) ?? -Infinity, time));
	}
	return newest;
}

const cells = (values: Array<string | number>, widths: number[]) => values.map((value, index) => String(value).padStart(widths[index])).join(' | ');

async function main() {
	console.log(`Message Trigger, rooms' proposals: requests counted by the sandbox (budget ${BUDGET_PER_MINUTE} a minute, a poll every minute); at most ${MAX_PAGES_PER_POLL} pages of proposals a poll; at most ${MAX_PROPOSALS_KEPT} proposals kept`);
	const widths = [9, 6, 13, 10, 11, 9, 11, 4, 12, 12, 13, 16, 10, 10, 8];
	console.log(
		`  ${cells(['proposals', 'rooms', 'page size', 'activation', 'pass polls', 'pass req', 'read in min', 'idle', 'after msg', 'dropped room', 'rooms kept', 'proposals kept', 'state', 'proposals', 'JSON ms'], widths)}`,
	);
	for (const proposals of PROPOSAL_COUNTS) {
		for (const rooms of [60, proposals]) {
			for (const pageSize of ['asked 100', "service's 20"] as const) {
				const figures = await measure({ proposals, rooms, pageSize });
				const idleMark = figures.idle <= TARGET_IDLE_REQUESTS ? '' : ' (NOT met)';
				console.log(
					`  ${cells(
						[
							proposals,
							rooms,
							pageSize,
							figures.activation,
							figures.polls,
							figures.passRequests,
							figures.minutes,
							`${figures.idle}${idleMark}`,
							`${figures.message} (${figures.messageProposal})`,
							`${figures.oldest} (${figures.oldestProposal})`,
							figures.roomsKept,
							figures.proposalsKept,
							kilobytes(figures.staticBytes),
							kilobytes(figures.proposalsBytes),
							figures.jsonMs.toFixed(2),
						],
						widths,
					)}`,
				);
			}
		}
	}
	console.log(
		'  activation: requests of the first poll (n8n awaits it; rooms only); pass polls and req: polls after it and their proposal-list requests until the list is read through;' +
			' idle: a poll when nobody wrote, read through (target 1); after msg: the poll after a client message in the room whose proposal changed last (where payload.proposal came from);' +
			' dropped room: the same in the room whose proposal changed first (index, a lookup of vendorProposal.id, or none); state: the node\'s static data; proposals: its proposals part; JSON ms: write and read it once',
	);
}

void main();
