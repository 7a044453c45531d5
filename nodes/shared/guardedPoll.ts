/**
 * The guard every polling trigger of the package runs its polls under: one poll at a time per trigger
 * node in this process, none that would repeat changes handed to n8n but not committed yet, and the
 * node's state (static data) never moved backwards.
 */
import type { IDataObject, IPollFunctions } from 'n8n-workflow';

/**
 * How long a state this process handed to n8n with an execution counts as "being committed". With
 * n8n's durable poll cursors the state a poll leaves is committed after poll() returns (with the
 * execution it emits), and the next poll reads the committed copy; a poll that starts in between would
 * read the older one and emit the same changes again. Past this time a commit that never landed is
 * taken as failed (its execution was not created either), and polling resumes from what is stored.
 */
export const COMMIT_GRACE_MS = 60_000;

interface HandedOver<State> {
	state: State;
	atMs: number;
	/** Whether the poll that left it emitted changes (its state is committed with their execution). */
	emitted: boolean;
}

interface TriggerPolls<State> {
	running: boolean;
	/** The last state a poll of this process left. */
	handedOver?: HandedOver<State>;
}

/** Per trigger node (workflow id and node id), for the life of the n8n process. */
const triggers = new Map<string, TriggerPolls<unknown>>();

export type PollClaim<State> =
	| {
			granted: true;
			/**
			 * Where to poll from when this process knows a newer state than the stored one that no commit
			 * has to carry: one a poll left without emitting anything. n8n does not commit every such state
			 * (the durable scheduler drops the state of the poll it runs at activation, and a null poll's
			 * commit is skipped when its lease has ended), and starting from an older one would make the
			 * activation's starting point the time of a later poll, losing the changes in between.
			 */
			startFrom?: State;
			release: (handedOver: State | undefined, emitted: boolean) => void;
	  }
	| { granted: false; reason: string };

/** Whether a stored state is older than (behind) one this process handed over; no stored state is older than any. */
export type IsOlder<State> = (stored: State | undefined, than: State) => boolean;

/**
 * One poll at a time per trigger node in this process: n8n starts the next poll at its time even if
 * the previous one is still running. A poll that finds one running, or finds a stored state older
 * than the one this process just handed over with an execution, must not run.
 */
export function claimPoll<State>(trigger: string, stored: State | undefined, nowMs: number, isOlder: IsOlder<State>): PollClaim<State> {
	const polls = (triggers.get(trigger) ?? { running: false }) as TriggerPolls<State>;
	triggers.set(trigger, polls);
	if (polls.running) return { granted: false, reason: 'the previous poll of this trigger is still running' };
	const handedOver = polls.handedOver;
	const newerThanStored = handedOver && isOlder(stored, handedOver.state) ? handedOver : undefined;
	if (newerThanStored?.emitted && nowMs - newerThanStored.atMs < COMMIT_GRACE_MS) {
		return { granted: false, reason: "the previous poll's progress is not committed yet" };
	}
	polls.running = true;
	return {
		granted: true,
		startFrom: newerThanStored && !newerThanStored.emitted ? newerThanStored.state : undefined,
		release: (state, emitted) => {
			polls.running = false;
			if (state) polls.handedOver = { state, atMs: Date.now(), emitted };
		},
	};
}


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
