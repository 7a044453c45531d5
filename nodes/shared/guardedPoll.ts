/**
 * The guard every polling trigger of the package runs its polls under: one poll at a time per trigger
 * node in this process, none that would repeat changes handed to n8n but not committed yet, and the
 * node's state (static data) never moved backwards.
 */
import type { IDataObject, IPollFunctions } from 'n8n-workflow';

import { nodeOwnerOf, processStore, type NodeOwner } from './processMemory';

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
	/** How long this is kept after the node's last poll (pollMemoryKeptMs). */
	keptMs: number;
	/** When a poll of this process last failed on purpose to show a lasting failure (`failureToShow`). */
	failureShownAtMs?: number;
}

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

/** One entry of n8n's Poll Times setting (the `pollTimes` parameter n8n adds to every polling node). */
export interface PollTimesItem {
	mode?: string;
	value?: number;
	unit?: string;
	cronExpression?: string;
}

/**
 * The longest a custom cron expression (5 fields, or 6 with seconds first) can leave between two
 * polls, read coarsely from its first restricted field: minutes restricted, at most an hour; hours, a
 * day; days of the week, a week; days of the month, two months (some lack the day); months, or days of
 * the month and of the week together, a year.
 */
function longestCronGapMs(expression: string): number {
	const fields = expression.trim().split(/\s+/);
	const [minute, hour, dayOfMonth, month, dayOfWeek] = fields.length === 6 ? fields.slice(1) : fields;
	const restricted = (field: string | undefined) => field !== undefined && field !== '*' && field !== '?';
	if (restricted(month) || (restricted(dayOfMonth) && restricted(dayOfWeek))) return 366 * DAY_MS;
	if (restricted(dayOfWeek)) return 7 * DAY_MS;
	if (restricted(dayOfMonth)) return 62 * DAY_MS;
	if (restricted(hour)) return DAY_MS;
	if (restricted(minute)) return HOUR_MS;
	return MINUTE_MS;
}

/** The longest time one Poll Times entry can leave between two polls. */
export function longestPollGapMs(item: PollTimesItem): number {
	switch (item.mode) {
		case 'everyMinute':
			return MINUTE_MS;
		case 'everyHour':
			return HOUR_MS;
		case 'everyDay':
			return DAY_MS;
		case 'everyWeek':
			return 7 * DAY_MS;
		case 'everyMonth':
			return 62 * DAY_MS;
		case 'everyX':
			return Math.max(1, Number(item.value) || 1) * (item.unit === 'minutes' ? MINUTE_MS : HOUR_MS);
		default:
			return longestCronGapMs(item.cronExpression ?? '');
	}
}

/**
 * How long a polling node's memory is kept after its last poll: two of its longest gaps between polls,
 * at least an hour. n8n gives polling nodes no deactivation call, so this is how the memory of a
 * deactivated one goes; an active one polls again before then. No entries: n8n's default, every minute.
 */
export function pollMemoryKeptMs(pollTimes: { item?: PollTimesItem[] } | undefined): number {
	const items = pollTimes?.item?.length ? pollTimes.item : [{ mode: 'everyMinute' }];
	// Entries poll independently: the one polling most often bounds the gap.
	return Math.max(HOUR_MS, 2 * Math.min(...items.map(longestPollGapMs)));
}

/** Per polling node (polls in the editor, Fetch Test Event, do not use the guard). */
const pollMemory = processStore<TriggerPolls<unknown>>({
	name: "polling nodes' last hand-over",
	belongsTo: 'a polling trigger node of an active workflow',
	lifetime: "two of the node's poll intervals (its Poll Times) after its last poll, at least an hour",
	keptMs: (polls) => polls.keptMs,
	renewedOnUse: true,
	maxEntries: 10_000,
	inUse: (polls) => polls.running,
});

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
			/** When a poll of this process last showed a lasting failure; none: never. */
			failureShownAtMs?: number;
			/** Whether a poll of this node ran in this process before (the activation's own poll did not). */
			polledBefore: boolean;
			noteFailureShown: (atMs: number) => void;
	  }
	| { granted: false; reason: string };

/** Whether a stored state is older than (behind) one this process handed over; no stored state is older than any. */
export type IsOlder<State> = (stored: State | undefined, than: State) => boolean;

/**
 * One poll at a time per trigger node in this process: n8n starts the next poll at its time even if
 * the previous one is still running. A poll that finds one running, or finds a stored state older
 * than the one this process just handed over with an execution, must not run.
 */
export function claimPoll<State>(trigger: NodeOwner, stored: State | undefined, nowMs: number, isOlder: IsOlder<State>, keptMs: number): PollClaim<State> {
	const polls = pollMemory.obtain(trigger, () => ({ running: false, keptMs })) as TriggerPolls<State>;
	polls.keptMs = keptMs;
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
		failureShownAtMs: polls.failureShownAtMs,
		polledBefore: handedOver !== undefined,
		noteFailureShown: (atMs) => {
			polls.failureShownAtMs = atMs;
		},
		release: (state, emitted) => {
			polls.running = false;
			if (state) polls.handedOver = { state, atMs: Date.now(), emitted };
			// Kept from the end of this poll on.
			pollMemory.set(trigger, polls);
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
	/**
	 * A lasting failure the poll should show as a failed execution instead of polling, given when this
	 * process last showed one. The poll throws it before any request: nothing is read or lost, and the
	 * next poll goes on from the same state. Remembered in this process only, because n8n commits no
	 * state of a poll that throws. Never asked of the first poll in a process: the activation's own poll
	 * (at a publish or a restart) that throws fails the activation instead.
	 */
	failureToShow?(state: State, lastShownAtMs: number | undefined, nowMs: number): Error | undefined;
}

/**
 * One poll of a trigger in the active workflow, under the guard every polling trigger of the package
 * shares (pollGuard): one poll at a time per node in this process, none that would repeat changes
 * handed to n8n but not committed yet. Returns the changes to emit, or [] when the poll emitted nothing.
 */
export async function runGuardedPoll<State, Change>(context: IPollFunctions, trigger: GuardedPoll<State, Change>, label: string): Promise<Change[]> {
	const staticData = context.getWorkflowStaticData('node');
	const stored = trigger.load(staticData);
	const keptMs = pollMemoryKeptMs(context.getNodeParameter('pollTimes', {}) as { item?: PollTimesItem[] });
	const claim = claimPoll(nodeOwnerOf(context), stored, Date.now(), trigger.isOlder, keptMs);
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
		const failure = claim.polledBefore ? trigger.failureToShow?.(state, claim.failureShownAtMs, Date.now()) : undefined;
		if (failure) {
			claim.noteFailureShown(Date.now());
			throw failure;
		}
		const outcome = await trigger.poll(state);
		changes = outcome.changes;
		trigger.save(staticData, outcome.state);
	} finally {
		claim.release(trigger.load(staticData), changes.length > 0);
	}
	return changes;
}
