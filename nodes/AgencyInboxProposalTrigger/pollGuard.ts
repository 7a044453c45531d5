import type { TriggerState } from './watermark';
import { compareMarks } from './watermark';

/**
 * How long a state this process handed to n8n counts as "being committed". With n8n's durable poll
 * cursors the state a poll leaves is committed after poll() returns (with the execution it emits),
 * and the next poll reads the committed copy; a poll that starts in between would read the older
 * one and emit the same changes again. Past this time a commit that never landed is taken as failed,
 * and polling resumes from what is stored (so nothing is lost).
 */
export const COMMIT_GRACE_MS = 60_000;

interface TriggerPolls {
	running: boolean;
	/** The last state a poll of this process left, and when. */
	handedOver?: { state: TriggerState; atMs: number };
}

/** Per trigger node (workflow id and node id), for the life of the n8n process. */
const triggers = new Map<string, TriggerPolls>();

export type PollClaim =
	| { granted: true; release: (handedOver?: TriggerState) => void }
	| { granted: false; reason: string };

/**
 * One poll at a time per trigger node in this process: n8n starts the next poll at its time even if
 * the previous one is still running. A poll that finds one running, or finds a stored state older
 * than the one this process just handed over, must not run.
 */
export function claimPoll(trigger: string, stored: TriggerState | undefined, nowMs: number): PollClaim {
	const polls = triggers.get(trigger) ?? { running: false };
	triggers.set(trigger, polls);
	if (polls.running) return { granted: false, reason: 'the previous poll of this trigger is still running' };
	const handedOver = polls.handedOver;
	if (
		handedOver &&
		nowMs - handedOver.atMs < COMMIT_GRACE_MS &&
		(!stored || compareMarks(stored.watermark, handedOver.state.watermark) < 0)
	) {
		return { granted: false, reason: "the previous poll's progress is not committed yet" };
	}
	polls.running = true;
	return {
		granted: true,
		release: (state) => {
			polls.running = false;
			if (state) polls.handedOver = { state, atMs: Date.now() };
		},
	};
}
