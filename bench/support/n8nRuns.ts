/**
 * Reading runs back from a real n8n for the benchmarks: the executions a workflow started since a
 * point, with n8n's own start and stop times, and the CPU time n8n's process used.
 */
import { readFileSync } from 'node:fs';

import type { RunningN8n } from '../../scripts/n8n/harness';

export interface TimedExecution {
	id: string;
	status: string;
	startedAt: string;
	stoppedAt?: string | null;
}

const PAGE = 100;
type N8nRest = Pick<RunningN8n, 'url' | 'restHeaders'>;

/** Executions of the workflow newer than `afterId` and older than `beforeId`, newest first (n8n's list: 100 at most). */
async function page(n8n: N8nRest, filter: object, range: { afterId?: string; beforeId?: string; limit?: number }): Promise<TimedExecution[]> {
	const query = [`filter=${encodeURIComponent(JSON.stringify(filter))}`, `limit=${range.limit ?? PAGE}`];
	if (range.afterId) query.push(`firstId=${range.afterId}`);
	if (range.beforeId) query.push(`lastId=${range.beforeId}`);
	const response = await fetch(`${n8n.url}/rest/executions?${query.join('&')}`, { headers: n8n.restHeaders });
	if (!response.ok) throw new Error(`GET /rest/executions: ${response.status} ${await response.text()}`);
	return ((await response.json()) as { data: { results: TimedExecution[] } }).data.results;
}

/** The id of the workflow's newest execution, '0' when it has none. */
export async function newestExecutionId(n8n: N8nRest, workflowId: string): Promise<string> {
	return (await page(n8n, { workflowId }, { limit: 1 }))[0]?.id ?? '0';
}

/** The workflow's executions newer than `afterId`, newest first. */
export async function executionsAfter(n8n: N8nRest, workflowId: string, afterId: string): Promise<TimedExecution[]> {
	const found: TimedExecution[] = [];
	for (let beforeId: string | undefined; ; ) {
		const results = await page(n8n, { workflowId }, { afterId, beforeId });
		found.push(...results);
		if (results.length < PAGE) return found;
		beforeId = results[results.length - 1].id;
	}
}

/**
 * Waits until `count` executions newer than `afterId` exist and none of them is still running (one
 * small query per poll), then returns them.
 */
export async function finishedRunsAfter(n8n: N8nRest, workflowId: string, afterId: string, count: number, timeoutMs = 300_000, pollMs = 500): Promise<TimedExecution[]> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const unfinished = await page(n8n, { workflowId, status: ['new', 'running', 'waiting'] }, { afterId, limit: 1 });
		if (unfinished.length === 0) {
			const executions = await executionsAfter(n8n, workflowId, afterId);
			if (executions.length >= count && executions.every((execution) => execution.stoppedAt)) return executions;
		}
		if (Date.now() > deadline) throw new Error(`${workflowId}: the ${count} runs did not finish within ${timeoutMs} ms`);
		await new Promise((resolve) => setTimeout(resolve, pollMs));
	}
}

/** n8n's own measure of a run: from its start to its stop. */
export function runDurationMs(execution: TimedExecution): number {
	return Date.parse(execution.stoppedAt!) - Date.parse(execution.startedAt);
}

export function median(values: number[]): number {
	const sorted = [...values].sort((a, b) => a - b);
	if (sorted.length === 0) return NaN;
	const middle = Math.floor(sorted.length / 2);
	return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** CPU milliseconds (user and system) the process has used so far (Linux /proc; clock ticks of 10 ms). */
export function cpuMsOf(pid: number): number {
	const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
	// Fields 14 and 15 of stat (utime, stime), counted from the state field (3rd).
	return (Number(fields[11]) + Number(fields[12])) * 10;
}
