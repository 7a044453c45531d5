/** Helpers of the end-to-end tests: the sandbox's records over HTTP, a lossy webhook relay, n8n's executions. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { parse as parseFlatted } from 'flatted';

import { fetchFromN8n, nodeOutputJson, type RunJson, type RunningN8n } from '../../scripts/n8n/harness';
import { throwOnceTestEnded } from '../helpers/testScope';

/**
 * AGENCY_INBOX_SOAK=1: the long variant of the tests that have one, as the weekly `soak` job of
 * .github/workflows/ci.yml runs them; CI runs the shorter one of the same guarantee.
 */
export const SOAK = process.env.AGENCY_INBOX_SOAK === '1';

export async function getJson<T>(url: string, headers: Record<string, string> = {}): Promise<T> {
	return readJson<T>(url, await fetch(url, { headers }));
}

/** GET from n8n's REST API, asked again while n8n answers that its database is not ready (fetchFromN8n). */
export async function getN8nJson<T>(url: string, headers: Record<string, string>): Promise<T> {
	return readJson<T>(url, await fetchFromN8n(url, { headers }));
}

async function readJson<T>(url: string, response: Response): Promise<T> {
	if (!response.ok) throw new Error(`GET ${url}: ${response.status} ${await response.text()}`);
	return (await response.json()) as T;
}

export async function postJson<T>(url: string, body: unknown): Promise<T> {
	const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
	if (!response.ok) throw new Error(`POST ${url}: ${response.status} ${await response.text()}`);
	return (await response.json()) as T;
}

/**
 * How long a real-n8n test waits for an event (a poll, a run, a row) unless it names a longer limit:
 * the limit only ends a wait for what will not happen, so it allows for a loaded machine (polls and
 * runs 10 times slower than on a calm one were seen at load averages of 20 to 30).
 */
export const EVENT_WAIT_MS = 5 * 60_000;

/** Polls `read` until `done` holds for its value; returns that value, or throws with the last one. */
export async function waitFor<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = EVENT_WAIT_MS): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	const stopIfTestEnded = throwOnceTestEnded();
	let value = await read();
	while (!done(value)) {
		if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last value: ${JSON.stringify(value).slice(0, 2000)}`);
		await sleep(250);
		stopIfTestEnded();
		value = await read();
	}
	return value;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface CapturedDelivery {
	headers: Record<string, string>;
	body: Buffer;
	/** What n8n answered when the relay forwarded it. */
	status: number;
}

export interface LossyRelay {
	url: string;
	captured: CapturedDelivery[];
	close(): Promise<void>;
}

/**
 * Forwards every webhook to `target` byte for byte, but tells the sender the first attempt of each
 * delivery id failed (HTTP 502), as when n8n's 200 is lost on the way back: the service then
 * re-delivers the same webhook, which must not start a second run.
 */
export async function startLossyRelay(target: string): Promise<LossyRelay> {
	const seenIds = new Set<string>();
	const captured: CapturedDelivery[] = [];
	const server = http.createServer((request, response) => {
		const chunks: Buffer[] = [];
		request.on('data', (chunk: Buffer) => chunks.push(chunk));
		request.on('end', async () => {
			const body = Buffer.concat(chunks);
			const headers: Record<string, string> = {};
			for (const name of ['content-type', 'webhook-id', 'webhook-timestamp', 'webhook-signature']) {
				const value = request.headers[name];
				if (typeof value === 'string') headers[name] = value;
			}
			try {
				const forwarded = await fetch(target, { method: 'POST', headers, body });
				await forwarded.arrayBuffer();
				captured.push({ headers, body, status: forwarded.status });
				const id = headers['webhook-id'];
				const loseThisAnswer = id !== undefined && !seenIds.has(id);
				if (id !== undefined) seenIds.add(id);
				response.writeHead(loseThisAnswer ? 502 : forwarded.status).end();
			} catch (error) {
				response.writeHead(504).end(String(error));
			}
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	return {
		url: `http://127.0.0.1:${port}/relay`,
		captured,
		close: () => new Promise((resolve) => server.close(() => resolve())),
	};
}

export interface ExecutionSummary {
	id: string;
	workflowId: string;
	status: string;
	finished?: boolean;
	/** When n8n created the execution (ISO). */
	createdAt?: string;
	/** webhook, manual (the Test URL), retry, … */
	mode?: string;
	retryOf?: string | null;
	/** n8n's own start and stop of the run (ISO); none yet while it waits or runs. */
	startedAt?: string | null;
	stoppedAt?: string | null;
}

export interface ExecutionQuery {
	/** Only executions in these states (n8n's filter). */
	status?: string[];
	/** Only executions with a higher id: n8n 2.41 has no such filter, so paging stops at the first page without one. */
	newerThan?: string;
	/** Executions a page (n8n allows 1 to 100). */
	pageSize?: number;
	/** Only n8n's first page: the newest ones. */
	firstPageOnly?: boolean;
}

/**
 * The executions n8n recorded for a workflow, newest first (the editor's own REST endpoint, 100 a page
 * at most). n8n 2.41 pages by the `nextCursor` it answers and refuses `lastId`, which older n8n pages by.
 */
export async function listExecutions(n8nUrl: string, headers: Record<string, string>, workflowId: string, query: ExecutionQuery = {}): Promise<ExecutionSummary[]> {
	const pageSize = query.pageSize ?? 100;
	const filter = encodeURIComponent(JSON.stringify({ workflowId, ...(query.status && { status: query.status }) }));
	const isWanted = (execution: ExecutionSummary) => query.newerThan === undefined || Number(execution.id) > Number(query.newerThan);
	const executions: ExecutionSummary[] = [];
	let next = '';
	for (;;) {
		const answer = await getN8nJson<{ data: { results: ExecutionSummary[]; nextCursor?: string | null } }>(`${n8nUrl}/rest/executions?filter=${filter}&limit=${pageSize}${next}`, headers);
		const { results, nextCursor } = answer.data;
		const wanted = results.filter(isWanted);
		executions.push(...wanted);
		if (query.firstPageOnly || (wanted.length === 0 && query.newerThan !== undefined)) return executions;
		if (nextCursor !== undefined) {
			if (!nextCursor) return executions;
			next = `&cursor=${encodeURIComponent(nextCursor)}`;
		} else {
			if (results.length < pageSize) return executions;
			next = `&lastId=${results[results.length - 1].id}`;
		}
	}
}

/** Executions that are neither running nor waiting. */
export function finishedExecutions(executions: ExecutionSummary[]): ExecutionSummary[] {
	return executions.filter((execution) => !['new', 'running', 'waiting'].includes(execution.status));
}

/** The items a node output in a run that n8n recorded (the editor's own REST endpoint). */
export async function recordedOutput(n8n: RunningN8n, executionId: string, nodeName: string): Promise<Array<Record<string, unknown>>> {
	const { data } = await getN8nJson<{ data: { data: string } }>(`${n8n.url}/rest/executions/${executionId}`, n8n.restHeaders);
	// The recorded data is the run's `data` (IRunExecutionData), in n8n's `flatted` format.
	return nodeOutputJson({ data: parseFlatted(data.data) } as RunJson, nodeName);
}
