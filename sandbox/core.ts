/** The sandbox's mutable core, shared by the API routes, control endpoints, webhooks and simulator. */
import { MonotonicClock } from './clock';
import { Random } from './random';
import { RollingWindowLimiter } from './rateLimit';
import { SEED_HISTORY_END_MS, seedState } from './seed';
import type { SandboxState } from './types';
import type { SandboxVariants } from './variants';
import { WebhookSender } from './webhooks';

export interface Fault {
	/**
	 * 'status' answers with `status`; 'drop' closes the connection without an answer; 'hold'
	 * processes the request and sends its real answer `holdMs` later (a slow service).
	 */
	kind: 'status' | 'drop' | 'hold';
	method?: string;
	pathPrefix: string;
	/** The answer's status; 0 for a drop (the request log shows 0: no answer was sent). */
	status: number;
	count: number;
	retryAfter?: number;
	afterProcessing?: boolean;
	holdMs?: number;
	/** Only requests that carry a pageCursor (a cursor the service no longer takes). */
	withCursor?: boolean;
}

export interface RequestLogEntry {
	method: string;
	path: string;
	query: Record<string, string>;
	/** Which key was used ('key-1', 'key-2', 'unknown' or 'none'), never the key itself. */
	apiKey: string;
	status: number;
	at: string;
}

/** Most requests the service saw in any 60 s window of a request log, 429s included. */
export function busiestMinute(requests: RequestLogEntry[]): number {
	const times = requests.map((request) => Date.parse(request.at)).sort((a, b) => a - b);
	let most = 0;
	for (let first = 0, last = 0; last < times.length; last++) {
		while (times[last] - times[first] >= 60_000) first++;
		most = Math.max(most, last - first + 1);
	}
	return most;
}

export interface CoreSettings {
	seed: number;
	proposals: number;
	rooms: number;
	pageSize: number;
	maxPageSize: number;
	/** The variants to start with; `SandboxCore.variants` holds the current ones. */
	variants: SandboxVariants;
	/** How far the service's clock runs ahead of the machine's (negative: behind); default 0. */
	clockOffsetMs?: number;
}

export class SandboxCore {
	readonly state: SandboxState;
	readonly clock: MonotonicClock;
	rng: Random;
	readonly faults: Fault[] = [];
	readonly requests: RequestLogEntry[] = [];
	/** Changed at run time through /_sandbox/variants; a reset keeps them, as a test sets them for its whole run. */
	readonly variants: SandboxVariants;

	constructor(
		readonly settings: CoreSettings,
		readonly limiter: RollingWindowLimiter,
		readonly webhooks: WebhookSender,
	) {
		this.clock = new MonotonicClock(SEED_HISTORY_END_MS, settings.clockOffsetMs);
		this.state = seedState(settings.seed, settings.proposals, settings.rooms);
		this.rng = new Random(settings.seed ^ 0x5eed);
		this.variants = { ...settings.variants };
	}

	/**
	 * Reseeds the data in place (so references to `state` stay valid) and clears logs, faults, rate
	 * counters and the webhooks not yet delivered (no retry of an event of before the reset reaches the
	 * endpoints); the clock starts again at its first offset; keeps the variants and the endpoints.
	 */
	reset(): void {
		this.webhooks.forgetPending();
		Object.assign(this.state, seedState(this.settings.seed, this.settings.proposals, this.settings.rooms));
		this.clock.restart(SEED_HISTORY_END_MS, this.settings.clockOffsetMs ?? 0);
		this.rng = new Random(this.settings.seed ^ 0x5eed);
		this.faults.length = 0;
		this.releaseHeld();
		this.requests.length = 0;
		this.limiter.reset();
	}

	/** The answers held by a hold fault now: each ends at its holdMs or when released. */
	private readonly held = new Set<() => void>();

	/** Waits until `holdMs` has passed or the held answers are released (releaseHeld). */
	async holdAnswer(holdMs: number): Promise<void> {
		await new Promise<void>((resolve) => {
			const end = () => {
				clearTimeout(timer);
				this.held.delete(end);
				resolve();
			};
			// Unref'd: an answer held for a client that is gone keeps no test process alive.
			const timer = setTimeout(end, holdMs).unref();
			this.held.add(end);
		});
	}

	/** Ends every held answer now; returns how many there were. */
	releaseHeld(): number {
		const count = this.held.size;
		for (const end of [...this.held]) end();
		return count;
	}

	/** Takes the next matching fault, if any, counting it down. */
	takeFault(method: string, path: string, fullPath: string, hasCursor = false): Fault | undefined {
		const index = this.faults.findIndex(
			(f) =>
				(f.method === undefined || f.method.toUpperCase() === method) &&
				(path.startsWith(f.pathPrefix) || fullPath.startsWith(f.pathPrefix)) &&
				(f.withCursor !== true || hasCursor),
		);
		if (index === -1) return undefined;
		const fault = this.faults[index];
		if (--fault.count <= 0) this.faults.splice(index, 1);
		return fault;
	}
}
