/** Helpers of the end-to-end tests: the sandbox's records over HTTP, a lossy webhook relay, n8n's executions. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { nodeOutputJson, type RunJson, type RunningN8n } from '../../scripts/n8n/harness';

export async function getJson<T>(url: string, headers: Record<string, string> = {}): Promise<T> {
	const response = await fetch(url, { headers });
	if (!response.ok) throw new Error(`GET ${url}: ${response.status} ${await response.text()}`);
	return (await response.json()) as T;
}

export async function postJson<T>(url: string, body: unknown): Promise<T> {
	const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
	if (!response.ok) throw new Error(`POST ${url}: ${response.status} ${await response.text()}`);
	return (await response.json()) as T;
}

/** Polls `read` until `done` holds for its value; returns that value, or throws with the last one. */
export async function waitFor<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	let value = await read();
	while (!done(value)) {
		if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last value: ${JSON.stringify(value).slice(0, 2000)}`);
		await sleep(250);
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
	/** webhook, manual (the Test URL), retry, … */
	mode?: string;
	retryOf?: string | null;
}

/**
 * The executions n8n recorded for a workflow, newest first (the editor's own REST endpoint, 100 a page
 * at most). n8n 2.41 pages by the `nextCursor` it answers and refuses `lastId`, which older n8n pages by.
 */
export async function listExecutions(n8nUrl: string, headers: Record<string, string>, workflowId: string): Promise<ExecutionSummary[]> {
	const filter = encodeURIComponent(JSON.stringify({ workflowId }));
	const executions: ExecutionSummary[] = [];
	let next = '';
	for (;;) {
		const answer = await getJson<{ data: { results: ExecutionSummary[]; nextCursor?: string | null } }>(`${n8nUrl}/rest/executions?filter=${filter}&limit=100${next}`, headers);
		const { results, nextCursor } = answer.data;
		executions.push(...results);
		if (nextCursor !== undefined) {
			if (!nextCursor) return executions;
			next = `&cursor=${encodeURIComponent(nextCursor)}`;
		} else {
			if (results.length < 100) return executions;
			next = `&lastId=${results[results.length - 1].id}`;
		}
	}
}

/** Executions that are neither running nor waiting. */
export function finishedExecutions(executions: ExecutionSummary[]): ExecutionSummary[] {
	return executions.filter((execution) => !['new', 'running', 'waiting'].includes(execution.status));
}

/** n8n's REST API sends a run's data in the `flatted` format: a JSON array whose strings are indexes into it. */
function unflatten(text: string): unknown {
	const entries = JSON.parse(text) as unknown[];
	const revived = new Map<number, unknown>();
	const revive = (index: number): unknown => {
		if (revived.has(index)) return revived.get(index);
		const entry = entries[index];
		if (typeof entry !== 'object' || entry === null) return entry;
		const copy: Record<string, unknown> = Array.isArray(entry) ? ([] as unknown as Record<string, unknown>) : {};
		revived.set(index, copy);
		for (const [key, value] of Object.entries(entry)) copy[key] = typeof value === 'string' ? revive(Number(value)) : value;
		return copy;
	};
	return revive(0);
}

/** The items a node output in a run that n8n recorded (the editor's own REST endpoint). */
export async function recordedOutput(n8n: RunningN8n, executionId: string, nodeName: string): Promise<Array<Record<string, unknown>>> {
	const { data } = await getJson<{ data: { data: string } }>(`${n8n.url}/rest/executions/${executionId}`, n8n.restHeaders);
	// The recorded data is the run's `data` (IRunExecutionData).
	return nodeOutputJson({ data: unflatten(data.data) } as RunJson, nodeName);
}
