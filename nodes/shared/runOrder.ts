/**
 * The order in which runs get the request budget (requestBudget.ts), per n8n execution id: a run that
 * an Agency Inbox Trigger delivery started is placed at the time its delivery was accepted (the
 * trigger sets it when the run starts), any other run at the time of its first request. So in a
 * burst the oldest delivery's run sends first, its second request included, in every process that
 * runs executions (each has its own budget).
 */

/** Runs remembered per process; the oldest are forgotten first (a forgotten run queues by request time). */
const MAX_RUNS = 10_000;
const orderByRun = new Map<string, number>();

function remember(executionId: string, order: number): void {
	orderByRun.set(executionId, order);
	if (orderByRun.size <= MAX_RUNS) return;
	const oldest = orderByRun.keys().next().value;
	if (oldest !== undefined) orderByRun.delete(oldest);
}

/** What the pipeline needs of a node's context; contexts outside a run have no execution id. */
export interface RunContext {
	getExecutionId?: () => string | undefined;
}

function executionIdOf(context: RunContext): string | undefined {
	const executionId = typeof context.getExecutionId === 'function' ? context.getExecutionId() : undefined;
	return executionId ? String(executionId) : undefined;
}

/** Places the run at `acceptedAtMs`, the time the delivery that started it was accepted. */
export function setRunOrder(context: RunContext, acceptedAtMs: number): void {
	const executionId = executionIdOf(context);
	if (executionId) remember(executionId, acceptedAtMs);
}

/** The run's place in the budget's queue: its delivery's acceptance, else its first request; none outside a run. */
export function runOrderOf(context: RunContext, nowMs = Date.now()): number | undefined {
	const executionId = executionIdOf(context);
	if (!executionId) return undefined;
	const order = orderByRun.get(executionId);
	if (order !== undefined) return order;
	remember(executionId, nowMs);
	return nowMs;
}
