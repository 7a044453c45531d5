/**
 * Issues change times that are strictly increasing (never equal to an earlier one), tracking real
 * time when it is ahead, so every change is distinguishable by its updatedAt.
 */
export class MonotonicClock {
	private lastMs: number;

	/** `offsetMs`: how far this clock runs ahead of the machine's (negative: behind), as another host's may. */
	constructor(
		startAfterMs: number,
		public offsetMs = 0,
	) {
		this.lastMs = startAfterMs;
	}

	/** Starts again after `startAfterMs` (a reseeded state), `offsetMs` from the machine's clock. */
	restart(startAfterMs: number, offsetMs: number): void {
		this.lastMs = startAfterMs;
		this.offsetMs = offsetMs;
	}

	nowMs(): number {
		this.lastMs = Math.max(Date.now() + this.offsetMs, this.lastMs + 1);
		return this.lastMs;
	}

	/** The time now without taking it for a change (the Date header of an answer). */
	peekMs(): number {
		return Math.max(Date.now() + this.offsetMs, this.lastMs);
	}

	nowIso(): string {
		return new Date(this.nowMs()).toISOString();
	}

	/** Ensures later times are after `ms` (used after reseeding). */
	advancePast(ms: number): void {
		this.lastMs = Math.max(this.lastMs, ms);
	}
}
