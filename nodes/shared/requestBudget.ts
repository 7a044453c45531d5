import { createHash } from 'node:crypto';
import { sleep } from 'n8n-workflow';

import { ProcessStore, type StoreRules } from './processMemory';

/** One request admitted by the budget; it keeps its place in the window until it is answered. */
export interface BudgetSlot {
	answeredAt?: number;
	/** The order of the run that sent it (runOrder.ts); none outside a run. */
	order?: number;
}

export interface BudgetTiming {
	/** Length of the service's rolling window. */
	windowMs: number;
	/** Slack added to each slot so our clock never runs ahead of the service's. */
	marginMs: number;
	/** How often to look again while every slot is held by an unanswered request. */
	busyPollMs: number;
	/**
	 * How long after its last answer a run may still send its next request: while few places are
	 * free, one is kept for each older run that sent within this time, so it finishes first.
	 */
	followUpMs?: number;
}

/**
 * Identifies an API key at one service without keeping the key: the SHA-256 of base URL and key.
 * The base URL is part of it because the same key at another service has another budget.
 */
export function budgetKeyFor(apiKey: string, baseUrl: string): string {
	return createHash('sha256').update(`${baseUrl}\n${apiKey}`).digest('hex');
}

/** A request waiting for a slot; the queue is sorted by `order`, then by arrival. */
interface Waiter {
	order: number;
	arrival: number;
	/** Set while the waiter waits for its turn at the head of the queue. */
	wake?: () => void;
}

/** One key's budget: its requests in the window, a 429's pause, and the requests waiting for a slot. */
interface KeyBudget {
	slots: BudgetSlot[];
	pausedUntil: number;
	queue: Waiter[];
}

/**
 * Rolling-window request budget per API key. A slot counts from the moment the request is sent
 * until one window after its answer arrived: the service counts the request somewhere in between,
 * so the service's own window never sees more than `limit` requests.
 *
 * Requests that wait are served lowest `order` first (the pipeline passes the time the run's
 * delivery was accepted, see runOrder.ts), so in a burst the oldest run gets the next slot, also for
 * its second and later requests, instead of whichever timer fires first. And while few places are
 * free, a request leaves one for each older run that was answered just now (`followUpMs`) and will
 * likely ask again (the reply after Get Proposal): in a burst the oldest runs finish in the first
 * window instead of every run getting its first request there and its last one a window later.
 */
export class RollingWindowBudget {
	private readonly budgets: ProcessStore<KeyBudget>;

	private arrivals = 0;

	/** `makeStore`: where the keys' budgets are kept (the pipeline's: a process store; by default one of its own). */
	constructor(
		private readonly timing: BudgetTiming,
		makeStore: (rules: StoreRules<KeyBudget>) => ProcessStore<KeyBudget> = (rules) => new ProcessStore(rules),
	) {
		this.budgets = makeStore({
			name: 'request budgets',
			belongsTo: 'an API key at a service (every workflow, node and URL using it: the service counts its requests together)',
			lifetime: "one window after its last request's answer, once none waits and no 429 pause lasts",
			keptMs: () => timing.windowMs + timing.marginMs,
			renewedOnUse: true,
			maxEntries: 10_000,
			inUse: (budget, nowMs) => budget.queue.length > 0 || budget.pausedUntil > nowMs || budget.slots.some((slot) => this.expiryOf(slot) > nowMs),
		});
	}

	/**
	 * Waits until the key has a free slot and no waiter of a lower order is ahead, then takes it.
	 * `runOrder` is the order of the run the request belongs to; a request outside a run queues by its
	 * own arrival and has no follow-up kept for it.
	 */
	async acquire(budgetKey: string, limit: number, runOrder?: number): Promise<BudgetSlot> {
		const { queue } = this.budgetOf(budgetKey);
		const order = runOrder ?? Date.now();
		const waiter: Waiter = { order, arrival: this.arrivals++ };
		const behind = queue.findIndex((other) => other.order > order);
		queue.splice(behind === -1 ? queue.length : behind, 0, waiter);
		try {
			for (;;) {
				if (queue[0] !== waiter) {
					await new Promise<void>((resolve) => (waiter.wake = resolve));
					continue;
				}
				const waitMs = this.waitBeforeNextSlot(budgetKey, limit, Date.now(), order);
				if (waitMs <= 0) {
					const slot: BudgetSlot = { order: runOrder };
					this.budgetOf(budgetKey).slots.push(slot);
					return slot;
				}
				// A waiter of a lower order may arrive meanwhile: it then takes this place at the head.
				await sleep(waitMs);
			}
		} finally {
			queue.splice(queue.indexOf(waiter), 1);
			this.wakeHead(queue);
		}
	}

	/** Marks the slot's request as answered; its place frees one window later. */
	release(slot: BudgetSlot): void {
		slot.answeredAt ??= Date.now();
	}

	/** Holds every request of the key until the given time (the service said so with a 429). */
	pauseUntil(budgetKey: string, time: number): void {
		const budget = this.budgetOf(budgetKey);
		budget.pausedUntil = Math.max(time, budget.pausedUntil);
	}

	/** Milliseconds to wait before a request of the given order may be sent; 0 when it may go now. */
	waitBeforeNextSlot(budgetKey: string, limit: number, now: number, order = -Infinity): number {
		const pausedFor = this.budgetOf(budgetKey).pausedUntil - now;
		if (pausedFor > 0) return pausedFor;
		const slots = this.dropExpiredSlots(budgetKey, now);
		const free = Math.max(1, limit) - slots.length;
		if (free > this.keptForOlderRuns(budgetKey, slots, order, now)) return 0;
		if (free > 0) return this.timing.busyPollMs;
		const expiries = slots.filter((slot) => slot.answeredAt !== undefined).map((slot) => this.expiryOf(slot));
		if (expiries.length === 0) return this.timing.busyPollMs;
		return Math.max(1, Math.min(...expiries) - now);
	}

	/** Older runs answered within followUpMs (or still waiting for an answer) that have no request in the queue. */
	private keptForOlderRuns(budgetKey: string, slots: BudgetSlot[], order: number, now: number): number {
		const followUpMs = this.timing.followUpMs ?? 0;
		const queued = new Set(this.budgetOf(budgetKey).queue.map((waiter) => waiter.order));
		const olderRuns = new Set<number>();
		for (const slot of slots) {
			if (slot.order === undefined || slot.order >= order || queued.has(slot.order)) continue;
			if (slot.answeredAt === undefined || now - slot.answeredAt <= followUpMs) olderRuns.add(slot.order);
		}
		return olderRuns.size;
	}

	/** Hands the turn to the new head of the queue, if it is waiting for it. */
	private wakeHead(queue: Waiter[]): void {
		const head = queue[0];
		const wake = head?.wake;
		if (!wake) return;
		head.wake = undefined;
		wake();
	}

	private expiryOf(slot: BudgetSlot): number {
		return (slot.answeredAt ?? Infinity) + this.timing.windowMs + this.timing.marginMs;
	}

	/** The key's budget, kept while in use and for one window after (see the store's rules). */
	private budgetOf(budgetKey: string): KeyBudget {
		return this.budgets.obtain({ apiKey: budgetKey }, () => ({ slots: [], pausedUntil: 0, queue: [] }));
	}

	private dropExpiredSlots(budgetKey: string, now: number): BudgetSlot[] {
		const budget = this.budgetOf(budgetKey);
		budget.slots = budget.slots.filter((slot) => this.expiryOf(slot) > now);
		return budget.slots;
	}
}

/**
 * This process's part of a key's budget when several n8n processes send with the key (queue mode:
 * each worker, and the main for the polling trigger, counts only its own requests). Each process
 * gets the floor of an equal share, at least one request per window, so together they stay within
 * the service's limit; one process (the default) gets all of it.
 */
export function shareOfBudget(requestsPerMinute: number, processes: number | undefined): number {
	const sharing = Math.max(1, Math.floor(Number(processes) || 1));
	return Math.max(1, Math.floor(requestsPerMinute / sharing));
}
