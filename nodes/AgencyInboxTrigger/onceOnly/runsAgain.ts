/**
 * Deliveries that ran again after a run of theirs was cut (n8n killed or stopped in the middle of the
 * run, a worker that died): which execution ran each again. The user's Retry of the cut execution runs
 * the delivery once more, as asked (a Retry always runs); its item's `ranAgainIn` names the execution
 * that ran it again, or is null where the trigger knows of none, so that a workflow can tell.
 *
 * Kept in the trigger's memory in this process and in the node's static data (saved with the run's end),
 * the newest MAX_RUNS_AGAIN_KEPT for DELIVERY_MEMORY_MS. A Retry in the process that ran the delivery
 * again finds it in memory; elsewhere, or after a restart, in the static data it loads: n8n's "Retry with
 * currently saved workflow" loads the current one, "with original workflow" the one of the cut run's
 * start, which has it only from an earlier re-run.
 */
import type { IDataObject } from 'n8n-workflow';

import { DELIVERY_MEMORY_MS } from '../deliveryLog';

/** Static data key: delivery id → [execution that ran it again, when (ms)]. */
export const RUNS_AGAIN_KEY = 'deliveriesRunAgain';
/** Most deliveries kept; a cut run is rare, so this covers far more than the service's retry schedule. */
export const MAX_RUNS_AGAIN_KEPT = 1_000;

/** What a run's claim found: the deliveries it goes on with, and of those the ones whose earlier run was cut. */
export interface Claimed {
	owned: Set<string>;
	runAgain: string[];
}

/** Delivery id → [execution, at ms], oldest first. */
export type RunsAgain = Map<string, [execution: string, atMs: number]>;

const isEntry = (value: unknown): value is [string, number] => Array.isArray(value) && typeof value[0] === 'string' && typeof value[1] === 'number' && Number.isFinite(value[1]);

/** Newest MAX_RUNS_AGAIN_KEPT of `runs`, none older than DELIVERY_MEMORY_MS. */
function kept(runs: RunsAgain, nowMs: number): RunsAgain {
	const recent = [...runs].filter(([, [, atMs]]) => nowMs - atMs < DELIVERY_MEMORY_MS).sort(([, [, a]], [, [, b]]) => a - b);
	return new Map(recent.slice(-MAX_RUNS_AGAIN_KEPT));
}

/** What the static data holds under RUNS_AGAIN_KEY, checked. */
export function loadRunsAgain(stored: unknown, nowMs: number): RunsAgain {
	const entries = typeof stored === 'object' && stored !== null && !Array.isArray(stored) ? Object.entries(stored).filter(([, value]) => isEntry(value)) : [];
	return kept(new Map(entries as Array<[string, [string, number]]>), nowMs);
}

/** Notes the deliveries this execution runs again, in memory and in the static data (with what this process knew). */
export function noteRunsAgain(memory: RunsAgain, staticData: IDataObject, deliveryIds: string[], execution: string, nowMs: number): void {
	for (const deliveryId of deliveryIds) {
		memory.delete(deliveryId);
		memory.set(deliveryId, [execution, nowMs]);
	}
	const merged = kept(new Map([...loadRunsAgain(staticData[RUNS_AGAIN_KEY], nowMs), ...memory]), nowMs);
	for (const deliveryId of memory.keys()) if (!merged.has(deliveryId)) memory.delete(deliveryId);
	staticData[RUNS_AGAIN_KEY] = Object.fromEntries(merged) as unknown as IDataObject;
}

/** The execution known to have run the delivery again, from memory or else the static data; null where none is known. */
export function ranAgainIn(memory: RunsAgain, staticData: IDataObject, deliveryId: string, nowMs: number): string | null {
	const known = memory.get(deliveryId) ?? loadRunsAgain(staticData[RUNS_AGAIN_KEY], nowMs).get(deliveryId);
	return known && nowMs - known[1] < DELIVERY_MEMORY_MS ? known[0] : null;
}
