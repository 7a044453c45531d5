/** Activity simulator: every interval one client-side change, chosen deterministically from the seed. */
import { applyChange, type ChangeKind } from './changes';
import type { SandboxCore } from './core';
import { Random } from './random';

export const DEFAULT_SIMULATOR_INTERVAL_MS = 5_000;

/** Weighted so that replies and views are common, hires and new bids rarer. */
const ACTIVITY: ChangeKind[] = ['clientReply', 'clientReply', 'viewed', 'viewed', 'hire', 'newProposal', 'newProposal', 'clientMessage', 'clientMessage', 'scheduleBid'];

/**
 * The first ticks go through every kind once, so a newcomer watching `npm start` sees each sample
 * workflow run within the first minute (6 ticks at its 8 s interval); then the weighted mix.
 */
export const FIRST_ROUND: ChangeKind[] = ['clientMessage', 'scheduleBid', 'newProposal', 'clientReply', 'viewed', 'hire'];

/** The room of a client message, the id of a scheduled bid intent, else the proposal's uid. */
function subjectOf(kind: ChangeKind, result: unknown): string {
	if (kind === 'clientMessage') return (result as { roomId: string }).roomId;
	if (kind === 'scheduleBid') return (result as { id: string }).id;
	return (result as { proposal: { uid: string } }).proposal.uid;
}

export class Simulator {
	private timer: NodeJS.Timeout | undefined;
	private rng: Random;
	intervalMs = DEFAULT_SIMULATOR_INTERVAL_MS;
	ticks = 0;
	readonly countsByKind: Partial<Record<ChangeKind, number>> = {};
	/** The latest changes, each with what it touched, so a watcher can follow it to the sample workflow it starts. */
	readonly recent: Array<{ kind: ChangeKind; subject: string; at: string }> = [];

	constructor(
		private readonly core: SandboxCore,
		private readonly seed: number,
	) {
		this.rng = new Random(seed ^ 0x51a1);
	}

	get running(): boolean {
		return this.timer !== undefined;
	}

	start(intervalMs = DEFAULT_SIMULATOR_INTERVAL_MS): void {
		if (!Number.isFinite(intervalMs) || intervalMs < 1) throw new Error('intervalMs must be a positive number.');
		this.stop();
		this.intervalMs = intervalMs;
		this.timer = setInterval(() => this.tick(), intervalMs);
	}

	stop(): void {
		if (this.timer !== undefined) clearInterval(this.timer);
		this.timer = undefined;
	}

	/** Restarts the deterministic sequence (after a reset). */
	rewind(): void {
		this.rng = new Random(this.seed ^ 0x51a1);
		this.ticks = 0;
		this.recent.length = 0;
		for (const kind of Object.keys(this.countsByKind)) delete this.countsByKind[kind as ChangeKind];
	}

	tick(): ChangeKind {
		const kind = this.ticks < FIRST_ROUND.length ? FIRST_ROUND[this.ticks] : this.rng.pick(ACTIVITY);
		const subject = subjectOf(kind, applyChange(this.core, { kind }));
		this.ticks++;
		this.countsByKind[kind] = (this.countsByKind[kind] ?? 0) + 1;
		this.recent.push({ kind, subject, at: new Date().toISOString() });
		if (this.recent.length > 100) this.recent.shift();
		return kind;
	}

	status() {
		return { running: this.running, intervalMs: this.intervalMs, ticks: this.ticks, countsByKind: { ...this.countsByKind }, recent: this.recent.slice(-20) };
	}
}
