/**
 * `npm start` as people run it, for the tests that start it: a child process in its own process
 * group, its guide, its stop; and what the sample workflows did with the simulator's first changes,
 * read from the sandbox over HTTP.
 */
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';

import { REPO_ROOT } from '../../scripts/n8n/agencyInbox';
import { getJson, sleep, waitFor } from './support';

export interface NpmStart {
	/** Everything it printed so far. */
	output(): string;
	/** When its guide's "Ready in" line arrived (Date.now()). */
	readyAt: number;
	/** The sandbox's control endpoints, `http://127.0.0.1:<port>/_sandbox`. */
	sandboxControl: string;
	/**
	 * Stops it as people do and waits until it says so and has exited: SIGTERM to npm (a supervisor),
	 * or SIGINT to its process group (Ctrl-C in a terminal).
	 */
	stop(how: 'SIGTERM to npm' | 'Ctrl-C'): Promise<void>;
	/** After a failure: prints its output, then stops its whole process group (SIGTERM, SIGKILL after 60 s). */
	abandon(): Promise<void>;
}

const READY_LINE = /^Ready in \d/m;

/** Runs `npm start -- <args>` and resolves once its guide is printed (rejects, after stopping it, if it exits first). */
export async function startNpmStart(args: string[], env: NodeJS.ProcessEnv, sandboxPort: number): Promise<NpmStart> {
	// Its own process group, so a failing test can still stop all of it.
	const child = spawn('npm', ['start', '--silent', '--', ...args], { cwd: REPO_ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
	let output = '';
	let readyAt = 0;
	const collect = (chunk: Buffer) => {
		output += chunk.toString();
		if (!readyAt && READY_LINE.test(output)) readyAt = Date.now();
	};
	child.stdout.on('data', collect);
	child.stderr.on('data', collect);
	const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
	const signalGroup = (signal: NodeJS.Signals | 0) => {
		try {
			process.kill(-child.pid!, signal);
			return true;
		} catch {
			return false; // the group is gone
		}
	};
	const abandon = async () => {
		process.stderr.write(`npm start ${args.join(' ')} printed:\n${output}\n`);
		// SIGTERM lets start.ts stop what is not in its group (Postgres); SIGKILL only if that hangs.
		signalGroup('SIGTERM');
		await waitFor('npm start\'s process group to end', async () => signalGroup(0), (alive) => !alive, 90_000).catch(() => signalGroup('SIGKILL'));
	};
	try {
		await waitFor('the guide', async () => output, (text) => text.includes('Press Ctrl-C') || child.exitCode !== null, 10 * 60_000);
		expect(output).toContain('Press Ctrl-C');
	} catch (error) {
		await abandon();
		throw error;
	}
	return {
		output: () => output,
		readyAt,
		sandboxControl: `http://127.0.0.1:${sandboxPort}/_sandbox`,
		async stop(how) {
			// npm passes a SIGTERM only to the shell it runs the script in; start.ts notices its parent going.
			if (how === 'SIGTERM to npm') process.kill(child.pid!, 'SIGTERM');
			else signalGroup('SIGINT');
			await waitFor('the stop', async () => output, (text) => text.includes('[start] stopped'));
			await exited;
		},
		abandon,
	};
}

/** Processes working in `dir` or naming it on their command line: n8n and its task runners, Postgres, Redis. */
export function processesIn(dir: string): string[] {
	return readdirSync('/proc')
		.filter((entry) => /^\d+$/.test(entry))
		.flatMap((pid) => {
			try {
				const commandLine = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
				return readlinkSync(`/proc/${pid}/cwd`).startsWith(dir) || commandLine.includes(dir) ? [`${pid} ${commandLine}`] : [];
			} catch {
				return []; // gone meanwhile
			}
		});
}

interface SimulatorStatus {
	ticks: number;
	/** The latest 20 changes: the room of a client message (`count` messages), the bid intent, the proposal, ... */
	recent: Array<{ kind: string; subject: string; count: number; at: string }>;
}

/** Seconds from "Ready" until each sample workflow had run on its first change. */
export interface FirstRuns {
	autoReply: number;
	bidCancelled: number;
	crmRow: number;
}

/**
 * The simulator's first changes after "Ready" are a client message, a scheduled bid and a new
 * proposal (8, 16 and 24 s in, at npm start's interval); each must reach n8n at the first attempt
 * and run its sample: an auto-reply in that room, that bid intent cancelled, that proposal in the CRM.
 */
export async function expectFirstChangesToRunEverySample(npmStart: NpmStart): Promise<FirstRuns> {
	const control = npmStart.sandboxControl;
	const read = <T>(route: string) => getJson<{ data: T }>(`${control}/${route}`).then((answer) => answer.data);
	/** The subject of the simulator's change number `index` (from 0), once it happened. */
	const change = async (index: number, kind: string) => {
		const { recent } = await waitFor(`the simulator's change ${index + 1}`, () => getJson<SimulatorStatus>(`${control}/simulator`), (status) => status.ticks > index, 3 * 60_000);
		expect({ index, kind: recent[index].kind }).toEqual({ index, kind });
		return recent[index].subject;
	};
	const secondsSinceReady = () => Math.round((Date.now() - npmStart.readyAt) / 1000);
	const sampleRun = async (what: string, done: () => Promise<boolean>) => {
		await waitFor(what, done, Boolean, 3 * 60_000);
		return secondsSinceReady();
	};
	const firstMessageRoom = change(0, 'clientMessage');
	const replyIn = (roomId: string, start: string) => async () =>
		(await read<Array<{ roomId: string; message: string }>>('messages')).some((sent) => sent.roomId === roomId && sent.message.startsWith(start));
	const [autoReply, bidCancelled, crmRow] = await Promise.all([
		firstMessageRoom.then((roomId) => sampleRun(`an auto-reply in ${roomId}`, replyIn(roomId, 'Thanks for your message'))),
		change(1, 'scheduleBid').then((bidId) =>
			sampleRun(`${bidId} to be cancelled`, async () => (await read<Array<{ id: string; status: string }>>('bid-intents')).some((intent) => intent.id === bidId && intent.status === 'cancelled')),
		),
		change(2, 'newProposal').then((uid) => sampleRun(`${uid} in the CRM`, async () => (await read<Array<{ uid: string }>>('crm')).some((row) => row.uid === uid))),
	]);

	// Each event went out after the endpoints were registered, and every endpoint answered its first attempt with 200.
	const endpoints = await read<unknown[]>('webhook-endpoints');
	const deliveries = await read<Array<{ messageId: string; type: string; attempt: number; status?: number }>>('deliveries');
	for (const type of ['chat.message.sent', 'bid_intent.scheduled']) {
		const firstMessage = deliveries.find((delivery) => delivery.type === type)?.messageId;
		const firstAttempts = deliveries.filter((delivery) => delivery.messageId === firstMessage && delivery.attempt === 1);
		expect({ type, statuses: firstAttempts.map((delivery) => delivery.status) }).toEqual({ type, statuses: endpoints.map(() => 200) });
	}
	return { autoReply, bidCancelled, crmRow };
}

/**
 * One reply per client message: the simulator runs `watchMs` after "Ready" (its first client message
 * 8 s in, random ones from 64 s on) and is then stopped; `settleMs` later, when every published
 * sample had time to answer (a polling one at its next poll, every 15 s), each room the simulator
 * wrote in holds as many replies (messages sent through Send Message) as it got client messages, and
 * no other room holds one. Returns the client messages counted.
 */
export async function expectOneReplyPerClientMessage(npmStart: NpmStart, watchMs = 70_000, settleMs = 30_000): Promise<number> {
	const control = npmStart.sandboxControl;
	await sleep(Math.max(0, npmStart.readyAt + watchMs - Date.now()));
	const response = await fetch(`${control}/simulator`, { method: 'DELETE' });
	if (!response.ok) throw new Error(`stopping the simulator: ${response.status} ${await response.text()}`);
	const simulator = (await response.json()) as SimulatorStatus;
	expect(simulator.recent).toHaveLength(simulator.ticks); // every change since the start is in `recent`
	await sleep(settleMs);
	const clientMessagesByRoom: Record<string, number> = {};
	for (const change of simulator.recent.filter((candidate) => candidate.kind === 'clientMessage')) {
		clientMessagesByRoom[change.subject] = (clientMessagesByRoom[change.subject] ?? 0) + change.count;
	}
	const repliesByRoom: Record<string, number> = {};
	for (const sent of (await getJson<{ data: Array<{ roomId: string }> }>(`${control}/messages`)).data) {
		repliesByRoom[sent.roomId] = (repliesByRoom[sent.roomId] ?? 0) + 1;
	}
	expect(repliesByRoom).toEqual(clientMessagesByRoom);
	return Object.values(clientMessagesByRoom).reduce((sum, count) => sum + count, 0);
}
