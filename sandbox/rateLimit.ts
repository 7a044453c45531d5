/** Per-API-key rolling-window rate limiter (requests per 60 s), with the figures /_sandbox/rate reports. */
export const SERVICE_WINDOW_MS = 60_000;

export type Admission = { admitted: true } | { admitted: false; retryAfterSeconds: number };

export class RollingWindowLimiter {
	private readonly admittedAt = new Map<string, number[]>();
	maxInAnyWindow = 0;
	rejected429 = 0;

	/** `windowMs` is the service's minute; tests shorten it to see the limit bite within seconds. */
	constructor(
		public requestsPerMinute: number,
		private readonly windowMs = SERVICE_WINDOW_MS,
	) {}

	private get unlimited(): boolean {
		return !Number.isFinite(this.requestsPerMinute) || this.requestsPerMinute <= 0;
	}

	admit(keyId: string, nowMs = Date.now()): Admission {
		const times = (this.admittedAt.get(keyId) ?? []).filter((t) => t > nowMs - this.windowMs);
		this.admittedAt.set(keyId, times);
		if (!this.unlimited && times.length >= this.requestsPerMinute) {
			this.rejected429++;
			// The window admits one more once the oldest admission in it leaves the window.
			const freeAtMs = times[times.length - this.requestsPerMinute] + this.windowMs;
			return { admitted: false, retryAfterSeconds: Math.max(1, Math.ceil((freeAtMs - nowMs) / 1000)) };
		}
		times.push(nowMs);
		this.maxInAnyWindow = Math.max(this.maxInAnyWindow, times.length);
		return { admitted: true };
	}

	/** Returns an admission (a request answered 429 by an injected fault does not count). */
	refund(keyId: string): void {
		this.admittedAt.get(keyId)?.pop();
	}

	reset(): void {
		this.admittedAt.clear();
		this.maxInAnyWindow = 0;
		this.rejected429 = 0;
	}
}
