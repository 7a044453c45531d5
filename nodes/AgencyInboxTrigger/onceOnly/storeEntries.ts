/**
 * Every entry the trigger writes to n8n's deduplication store, spelled here and nowhere else. The store
 * keeps one row per workflow and trigger node, shared by every n8n process (n8n keeps an md5 of each).
 *
 * | entry                              | written by                         | means                                         |
 * |------------------------------------|------------------------------------|-----------------------------------------------|
 * | `<id>`                             | a run's claim, either setup        | a run of the delivery started (queue mode: its first attempt's claim) |
 * | `<id> open`                        | the default setup's claim          | that run's end is not known yet: removed once n8n answered it |
 * | `<id> attempt <n>`                 | queue mode's claim                 | attempt n (2 and up) of the delivery: one after n8n answered the earlier ones with an error |
 * | `<claim> run <execution>`          | queue mode's claim                 | the token of the execution that made the claim: the claim is that execution's |
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
