import type { IDataObject, IPollFunctions } from 'n8n-workflow';

import type { IsOlder } from './pollGuard';
import { claimPoll } from './pollGuard';

/** Where n8n does not say how long a poll may take (before n8n 2.x), assume its usual 5 minutes. */
const DEFAULT_POLL_BUDGET_MS = 5 * 60 * 1000;

/** Share of the poll budget spent paging; the rest covers a last request that waits for the rate limit. */
const PAGING_SHARE_OF_BUDGET = 0.5;

/** Whether a poll may still start another request; an unfinished sweep resumes at the next poll. */
export type CanContinue = () => boolean;

/** Stop paging before n8n abandons the poll. */
export function pagingDeadline(context: IPollFunctions): CanContinue {
	const budgetMs = typeof context.getPollBudgetMs === 'function' ? context.getPollBudgetMs() : DEFAULT_POLL_BUDGET_MS;
	const deadline = Date.now() + budgetMs * PAGING_SHARE_OF_BUDGET;
	return () => Date.now() < deadline;
}

/** What a polling trigger keeps in the node's static data and how one poll moves it on. */
export interface GuardedPoll<State, Change> {
	/** The stored state, or undefined before the first poll. */
	load(staticData: IDataObject): State | undefined;
	/** Writes a poll's state, never moving what is stored backwards (another poll may have finished first). */
	save(staticData: IDataObject, state: State): void;
	isOlder: IsOlder<State>;
	/** The first poll's state: everything that exists now is history, nothing is emitted. */
	bootstrap(): Promise<State> | State;
	/** One poll from `state`: what changed since, oldest first, and the state to keep. */
	poll(state: State): Promise<{ state: State; changes: Change[] }>;
}

/**
 * One poll of a trigger in the active workflow, under the guard every polling trigger of the package
 * shares (pollGuard): one poll at a time per node in this process, none that would repeat changes
 * handed to n8n but not committed yet. Returns the changes to emit, or [] when the poll emitted nothing.
 */
export async function runGuardedPoll<State, Change>(context: IPollFunctions, trigger: GuardedPoll<State, Change>, label: string): Promise<Change[]> {
	const staticData = context.getWorkflowStaticData('node');
	const stored = trigger.load(staticData);
	const claim = claimPoll(`${context.getWorkflow().id}/${context.getNode().id}`, stored, Date.now(), trigger.isOlder);
	if (!claim.granted) {
		context.logger.debug(`${label}: poll skipped, ${claim.reason}`);
		return [];
	}
	const state = claim.startFrom ?? stored;
	let changes: Change[] = [];
	try {
		if (state === undefined) {
			trigger.save(staticData, await trigger.bootstrap());
			return [];
		}
		const outcome = await trigger.poll(state);
		changes = outcome.changes;
		trigger.save(staticData, outcome.state);
	} finally {
		claim.release(trigger.load(staticData), changes.length > 0);
	}
	return changes;
}
