/**
 * Every entry the trigger writes to n8n's deduplication store, spelled here and nowhere else. The store
 * keeps one row per workflow and trigger node, shared by every n8n process (n8n keeps an md5 of each).
 *
 * | entry                              | written by                         | means                                         |
 * |------------------------------------|------------------------------------|-----------------------------------------------|
 * | `<id>`                             | a run's claim, either setup        | a run of the delivery started (queue mode: its first attempt's claim) |
 * | `<id> open`                        | the default setup's claim          | that run's end is not known yet: removed once n8n answered it |
 * | `<id> attempt <n>`                 | queue mode's claim                 | attempt n (2 and up): claimed once the lease of attempt n - 1 had lapsed (its run was cut) |
 * | `<claim> run <execution>`          | queue mode's claim                 | the token of the execution that made the claim: the claim is that execution's |
 * | `<id> lease <slot>`                | queue mode: the process holding the claim | a live process holds the delivery's run in this time slot (deliveryLease.ts) |
 * | `<id> held through`                | queue mode: that process, when its hold ends | the run was held to the end of its hold by a live process: it ran (or runs on) |
 */

/** A run of the delivery started (the default setup), or its first attempt was claimed (queue mode). */
export function deliveryEntry(deliveryId: string): string {
	return deliveryId;
}

/** Stands while a run of the delivery started in the default setup and its end is not known. */
export function openEntry(deliveryId: string): string {
	return `${deliveryId} open`;
}

/** The claim of an attempt in queue mode: the id for the first (as 0.2 recorded it), then one per attempt. */
export function claimEntry(deliveryId: string, attempt: number): string {
	return attempt === 0 ? deliveryEntry(deliveryId) : `${deliveryId} attempt ${attempt + 1}`;
}

/** The token an execution records beside its claim. */
export function tokenEntry(claim: string, execution: string): string {
	return `${claim} run ${execution}`;
}

/** A live process holds a run of the delivery in this time slot (queue mode). */
export function leaseEntry(deliveryId: string, slot: number): string {
	return `${deliveryId} lease ${slot}`;
}

/** The process that held a run of the delivery was alive to the end of its hold (queue mode). */
export function heldThroughEntry(deliveryId: string): string {
	return `${deliveryId} held through`;
}
