/**
 * A delivery's lease in queue mode: whether a run of it goes on in a live process. The process whose run
 * claimed the delivery records a lease entry for the current time slot and renews it every renewMs, one
 * call for all the deliveries it holds, for maxHoldMs after the claim: a worker cannot see when the run
 * it started ends (n8n tells the webhook process, which cannot write to the store), so it holds for a
 * stated time, then records that the delivery was held through (confirmed, before its lease lapses). A
 * killed process renews nothing and records nothing: its lease lapses within two slots, and the missing
 * mark tells a later run that the holder's run was cut.
 *
 * Another run of the same delivery reads the lease by recording the entries of this slot and the last
 * one and removing those it made; any of them there means a live holder. Those probes can only make a
 * holder look alive (a run then fails and the service retries), and the holder's renewal puts back an
 * entry a probe removed within renewMs; a lease counts as lapsed only when two probes probeGapMs apart
 * (longer than renewMs) both found none.
 */
import { sleep } from 'n8n-workflow';

import { heldThroughEntry, leaseEntry } from './storeEntries';
import { type DeliveryStore, type StoreLine, storeTiming } from './storeLine';

/** Tests shorten these; n8n never changes them. */
export const leaseTiming = { slotMs: 20_000, renewMs: 5_000, probeGapMs: 7_000, maxHoldMs: 5 * 60_000 };

const slotAt = (nowMs: number) => Math.floor(nowMs / leaseTiming.slotMs);

/** The deliveries a process holds, and its renewals: one per trigger node (triggerMemory.ts). */
export class Leases {
	/** Held delivery ids: when the hold began and the slot last recorded. */
	private readonly held = new Map<string, { sinceMs: number; slot: number }>();

	private renewing = false;

	constructor(
		private readonly line: StoreLine,
		/** False once the process let go of the trigger's memory: renewals stop (tests take that for a kill). */
		private readonly stillKept: () => boolean,
	) {}

	get busy(): boolean {
		return this.renewing;
	}

	/** Holds the deliveries a run of this process claimed, their lease recorded before the run goes on. */
	async hold(store: DeliveryStore, deliveryIds: string[], nowMs = Date.now()): Promise<void> {
		const slot = slotAt(nowMs);
		for (const deliveryId of deliveryIds) this.held.set(deliveryId, { sinceMs: nowMs, slot });
		await this.line.record(store, deliveryIds.map((deliveryId) => leaseEntry(deliveryId, slot)));
		if (!this.renewing) void this.renew(store);
	}

	/** Lets go of held deliveries, their lease entries removed: a run gave its claim back, or a hold ended and its mark stands. */
	release(store: DeliveryStore, deliveryIds: string[]): void {
		const entries = deliveryIds.flatMap((deliveryId) => {
			const hold = this.held.get(deliveryId);
			this.held.delete(deliveryId);
			return hold ? [leaseEntry(deliveryId, hold.slot), leaseEntry(deliveryId, hold.slot - 1)] : [];
		});
		if (entries.length > 0) this.line.remove(store, entries);
	}

	private async renew(store: DeliveryStore): Promise<void> {
		this.renewing = true;
		try {
			while (this.held.size > 0 && this.stillKept()) {
				await sleep(leaseTiming.renewMs);
				const nowMs = Date.now();
				const slot = slotAt(nowMs);
				const renewed: string[] = [];
				const lapsed: string[] = [];
				const heldThrough: string[] = [];
				for (const [deliveryId, hold] of this.held) {
					// Entries older than the last slot go.
					for (const old of [hold.slot - 1, hold.slot]) if (old < slot - 1) lapsed.push(leaseEntry(deliveryId, old));
					renewed.push(leaseEntry(deliveryId, slot));
					hold.slot = slot;
					if (nowMs - hold.sinceMs >= leaseTiming.maxHoldMs) heldThrough.push(deliveryId);
				}
				if (!this.stillKept()) return;
				if (renewed.length > 0) await this.line.record(store, renewed).catch(() => undefined);
				if (lapsed.length > 0) this.line.remove(store, lapsed);
				// A hold ends once its mark stands; until then its lease is renewed.
				if (heldThrough.length > 0 && (await this.markHeldThrough(store, heldThrough))) this.release(store, heldThrough);
			}
		} finally {
			this.renewing = false;
		}
	}

	/**
	 * Records that the deliveries were held through, read back after settleMs (a write of another process
	 * may have overwritten ours): their leases lapse only once the mark stands, else the next round tries again.
	 */
	private async markHeldThrough(store: DeliveryStore, deliveryIds: string[]): Promise<boolean> {
		const marks = deliveryIds.map(heldThroughEntry);
		try {
			await this.line.record(store, marks);
			await sleep(storeTiming.settleMs);
			const found = await this.line.record(store, marks);
			return marks.every((mark) => found.has(mark));
		} catch {
			return false;
		}
	}
}

/** Whether a live process holds the delivery: two probes probeGapMs apart, the second only when the first found none. */
export async function isHeldByLiveProcess(line: StoreLine, store: DeliveryStore, deliveryId: string): Promise<boolean> {
	if (await probe(line, store, deliveryId)) return true;
	await sleep(leaseTiming.probeGapMs);
	return await probe(line, store, deliveryId);
}

/**
 * Whether the run that held the delivery before was held through (it ran, or still runs past maxHoldMs),
 * read once this run has claimed the next attempt: no other run reads it at the same time.
 */
export async function wasHeldThrough(line: StoreLine, store: DeliveryStore, deliveryId: string): Promise<boolean> {
	return await recordedBefore(line, store, [heldThroughEntry(deliveryId)]);
}

async function probe(line: StoreLine, store: DeliveryStore, deliveryId: string): Promise<boolean> {
	const slot = slotAt(Date.now());
	return await recordedBefore(line, store, [leaseEntry(deliveryId, slot), leaseEntry(deliveryId, slot - 1)]);
}

/** Whether any of the entries was there: the store answers only by recording, so the entries it made are removed again. */
async function recordedBefore(line: StoreLine, store: DeliveryStore, entries: string[]): Promise<boolean> {
	const found = await line.record(store, entries);
	const made = entries.filter((entry) => !found.has(entry));
	if (made.length > 0) line.remove(store, made);
	return found.size > 0;
}
