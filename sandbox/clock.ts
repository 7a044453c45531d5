/**
 * Issues change times that are strictly increasing (never equal to an earlier one), tracking real
 * time when it is ahead, so every change is distinguishable by its updatedAt.
 */
export class MonotonicClock {
	private lastMs: number;

	constructor(startAfterMs: number) {
		this.lastMs = startAfterMs;
	}

	nowMs(): number {
		this.lastMs = Math.max(Date.now(), this.lastMs + 1);
		return this.lastMs;
	}

	nowIso(): string {
		return new Date(this.nowMs()).toISOString();
	}

	/** Ensures later times are after `ms` (used after reseeding). */
	advancePast(ms: number): void {
		this.lastMs = Math.max(this.lastMs, ms);
	}
}
