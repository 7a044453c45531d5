/**
 * The claim of a run whose delivery another process accepted: queue mode, where a webhook process
 * accepts and a worker runs. The run claims its delivery and attempt in n8n's deduplication store (one
 * row per workflow and node, shared by every process, read and written back whole without a lock): it
 * records the claim and a token naming its execution, waits settleMs (any write that read the row before
 * ours has landed by then) and records the token again. The token there already means the claim is this
 * execution's (also when n8n runs it again after its worker died: n8n 1.x does that); the claim there
 * without the token means another run of the same delivery wrote last and owns it, and this run stops at
 * the trigger; neither means another delivery's run overwrote both, and recording again has put them
 * back. That costs settleMs (1 to 1.5 s) per run. Where n8n has no store (older n8n, such as 1.49.0), a
 * run is claimed in this process only.
 */
import { randomBytes } from 'node:crypto';

import type { IExecuteFunctions } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import { DeliveryLog } from '../deliveryLog';
import { couldNotRecord } from './claimFailure';
import { claimEntry, tokenEntry } from './storeEntries';
import { type DeliveryStore, storeOf } from './storeLine';
import type { TriggerState } from './triggerMemory';

/** Long enough for any write that read the row before ours to have landed (tests shorten it). */
export const queueClaimTiming = { settleMs: 1_000 };

/** How often a claim overwritten by another delivery's run is recorded again before the run fails. */
const CLAIM_ROUNDS = 8;

export async function claimOthersDeliveries(context: IExecuteFunctions, state: TriggerState, ids: string[], attempts: Map<string, number>, nowMs: number): Promise<Set<string>> {
	// Taken before anything is awaited: a second run of the same id in this process stops here.
	const claimable = ids.filter((deliveryId) => !state.claiming.has(deliveryId));
	if (claimable.length === 0) return new Set();
	for (const deliveryId of claimable) state.claiming.add(deliveryId);
	try {
		const store = storeOf(context);
		if (!store) return claimWithoutStore(state, claimable, attempts, nowMs);
		return await claimInStore(context, state, store, claimable, attempts);
	} finally {
		for (const deliveryId of claimable) state.claiming.delete(deliveryId);
	}
}

async function claimInStore(context: IExecuteFunctions, state: TriggerState, store: DeliveryStore, ids: string[], attempts: Map<string, number>): Promise<Set<string>> {
	const execution = String(context.getExecutionId?.() || randomBytes(9).toString('base64url'));
	const claimOf = (deliveryId: string) => claimEntry(deliveryId, attempts.get(deliveryId) ?? 0);
	const tokenOf = (deliveryId: string) => tokenEntry(claimOf(deliveryId), execution);
	const record = (deliveryIds: string[]) =>
		state.storeLine.record(store, deliveryIds.flatMap((deliveryId) => [claimOf(deliveryId), tokenOf(deliveryId)])).catch(() => {
			throw couldNotRecord(context, deliveryIds);
		});
	const recordedBefore = await record(ids);
	const owned = new Set(ids.filter((deliveryId) => recordedBefore.has(tokenOf(deliveryId))));
	let pending = ids.filter((deliveryId) => !owned.has(deliveryId) && !recordedBefore.has(claimOf(deliveryId)));
	for (let round = 0; round < CLAIM_ROUNDS && pending.length > 0; round++) {
		// A little jitter, so that runs of two processes that overwrote each other do not meet again.
		await sleep(queueClaimTiming.settleMs * (1 + Math.random() / 2));
		const recorded = await record(pending);
		for (const deliveryId of pending) if (recorded.has(tokenOf(deliveryId))) owned.add(deliveryId);
		pending = pending.filter((deliveryId) => !owned.has(deliveryId) && !recorded.has(claimOf(deliveryId)));
	}
	if (pending.length > 0) throw couldNotRecord(context, pending);
	return owned;
}

function claimWithoutStore(state: TriggerState, ids: string[], attempts: Map<string, number>, nowMs: number): Set<string> {
	state.startedWithoutStore ??= new DeliveryLog();
	const started = state.startedWithoutStore;
	const claims = ids.map((deliveryId) => [deliveryId, claimEntry(deliveryId, attempts.get(deliveryId) ?? 0)]);
	const owned = new Set(claims.filter(([, claim]) => !started.has(claim)).map(([deliveryId]) => deliveryId));
	for (const [, claim] of claims) started.add(claim, nowMs);
	return owned;
}
