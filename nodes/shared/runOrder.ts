/**
 * The order in which runs get the request budget (requestBudget.ts), per n8n execution id: a run that
 * an Agency Inbox Trigger delivery started is placed at the time its delivery was accepted (the
 * trigger sets it when the run starts), any other run at the time of its first request. So in a
 * burst the oldest delivery's run sends first, its second request included, in every process that
 * runs executions (each has its own budget).
 */
import { processStore } from './processMemory';

/** How long a run's place is kept after its last request; a run forgotten meanwhile queues by the time of its next request. */
const RUN_ORDER_KEPT_MS = 60 * 60 * 1000;

/** Per run, not per workflow: a run goes on after its workflow is deactivated, so no deactivation releases it. */
const orderByRun = processStore<number>({
	name: 'run order',
	belongsTo: 'an n8n execution',
	lifetime: "an hour after the run's last request",
	keptMs: RUN_ORDER_KEPT_MS,
	renewedOnUse: true,
	maxEntries: 10_000,
});

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
	if (executionId) orderByRun.set({ execution: executionId }, acceptedAtMs);
}

/** The run's place in the budget's queue: its delivery's acceptance, else its first request; none outside a run. */
export function runOrderOf(context: RunContext, nowMs = Date.now()): number | undefined {
	const executionId = executionIdOf(context);
	if (!executionId) return undefined;
	return orderByRun.obtain({ execution: executionId }, () => nowMs);
}
