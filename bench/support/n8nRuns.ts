/**
 * Reading runs back from a real n8n for the benchmarks: the executions a workflow started since a
 * point, with n8n's own start and stop times, and the CPU time n8n's process used.
 */
import { readFileSync } from 'node:fs';

import type { RunningN8n } from '../../scripts/n8n/harness';
import { listExecutions, type ExecutionQuery, type ExecutionSummary } from '../../test/e2e/support';

export type TimedExecution = ExecutionSummary;

type N8nRest = Pick<RunningN8n, 'url' | 'restHeaders'>;

/** The workflow's executions as the e2e tests read them (one way of paging, old and new n8n). */
function executionsOf(n8n: N8nRest, workflowId: string, query: ExecutionQuery): Promise<TimedExecution[]> {
	return listExecutions(n8n.url, n8n.restHeaders, workflowId, query);
}

/** The id of the workflow's newest execution, '0' when it has none (the highest id of n8n's first page). */
export async function newestExecutionId(n8n: N8nRest, workflowId: string): Promise<string> {
	const firstPage = await executionsOf(n8n, workflowId, { firstPageOnly: true });
	return String(Math.max(0, ...firstPage.map((execution) => Number(execution.id))));
}

/** The workflow's executions newer than `afterId`. */
export function executionsAfter(n8n: N8nRest, workflowId: string, afterId: string): Promise<TimedExecution[]> {
	return executionsOf(n8n, workflowId, { newerThan: afterId });
}

/**
 * Waits until `count` executions newer than `afterId` exist and none of them is still running (one
 * small query per poll), then returns them.
 */
export async function finishedRunsAfter(n8n: N8nRest, workflowId: string, afterId: string, count: number, timeoutMs = 300_000, pollMs = 500): Promise<TimedExecution[]> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const unfinished = await executionsOf(n8n, workflowId, { status: ['new', 'running', 'waiting'], newerThan: afterId, pageSize: 10 });
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
	return Date.parse(execution.stoppedAt!) - Date.parse(execution.startedAt!);
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
