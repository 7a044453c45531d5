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
