/**
 * The claim of a run whose delivery another process accepted: queue mode, where webhook processes accept
 * and workers run. The record is n8n's deduplication store (one row per workflow and node, shared by
 * every process, read and written back whole without a lock), so any process decides a re-delivery the
 * same way, whichever webhook process it reached and after any restart.
 *
 * An attempt is claimed with two entries: the claim and a token naming the execution. The run records
 * both, waits settleMs (any write that read the row before ours has landed by then) and records the
 * token again. The token there already: the claim is this execution's (also when n8n runs it again after
 * its worker died: n8n 1.x does that). The claim there without the token: another run holds the attempt.
 * Neither: another delivery's run overwrote both, and recording again has put them back. That costs
 * settleMs (1 to 1.5 s) per run. The winner holds the delivery's lease (deliveryLease.ts) before it goes
 * on. A run that finds the attempt held reads the lease: held by a live process, the run fails (n8n
 * answers the service 500, never a 200 without the delivery's effect, and the service retries later); the
 * lease lapsed, the run claims the next attempt the same way, and its winner reads whether the run before
 * was held through (it ran: this run stops at the trigger, n8n answers 200) or cut (this run goes on).
 * Where n8n has no store (older n8n, such as 1.49.0), a run is claimed in this process only.
 */
import { randomBytes } from 'node:crypto';

import type { IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError, sleep } from 'n8n-workflow';

import { DeliveryLog } from '../deliveryLog';
import { couldNotRecord, cutTooOften } from './claimFailure';
import { isHeldByLiveProcess, wasHeldThrough } from './deliveryLease';
import { claimEntry, tokenEntry } from './storeEntries';
import { type DeliveryStore, storeOf, storeTiming } from './storeLine';
import type { Claimed } from './runsAgain';
import type { TriggerState } from './triggerMemory';

/** How often a claim overwritten by another delivery's run is recorded again before the run fails. */
const CLAIM_ROUNDS = 8;
/** Cut runs of one delivery after which a run gives up (the service retries it later, and each retry fails the same way). */
export const MAX_ATTEMPTS = 20;

export async function claimOthersDeliveries(context: IExecuteFunctions, state: TriggerState, ids: string[], nowMs: number): Promise<Claimed> {
	// Taken before anything is awaited: a second run of the same id in this process at once fails at once.
	const inClaim = ids.filter((deliveryId) => state.claiming.has(deliveryId));
	if (inClaim.length > 0) throw heldElsewhere(context, inClaim);
	for (const deliveryId of ids) state.claiming.add(deliveryId);
	try {
		const store = storeOf(context);
		if (!store) return { owned: claimWithoutStore(state, ids, nowMs), runAgain: [] };
		return await claimInStore(context, state, store, ids);
	} finally {
		for (const deliveryId of ids) state.claiming.delete(deliveryId);
	}
}

async function claimInStore(context: IExecuteFunctions, state: TriggerState, store: DeliveryStore, ids: string[]): Promise<Claimed> {
	const execution = String(context.getExecutionId?.() || randomBytes(9).toString('base64url'));
	const attempts = new Map(ids.map((deliveryId) => [deliveryId, 0]));
	const owned = new Set<string>();
	const runAgain: string[] = [];
	let pending = ids;
	while (pending.length > 0) {
		const { won, held } = await claimAttempt(context, state, store, pending, attempts, execution);
		if (won.length > 0) {
			await state.leases.hold(store, won).catch(() => {
				throw couldNotRecord(context, won);
			});
			// A later attempt: the run before it stopped renewing its lease. Held through, it ran: this run stops at the trigger.
			const ran = await filterAsync(won.filter((deliveryId) => attempts.get(deliveryId)! > 0), (deliveryId) => wasHeldThrough(state.storeLine, store, deliveryId));
			giveBack(state, store, ran, attempts, execution);
			for (const deliveryId of won) if (!ran.includes(deliveryId)) owned.add(deliveryId);
			runAgain.push(...won.filter((deliveryId) => attempts.get(deliveryId)! > 0 && !ran.includes(deliveryId)));
		}
		const heldByLive = await filterAsync(held, (deliveryId) => isHeldByLiveProcess(state.storeLine, store, deliveryId));
		if (heldByLive.length > 0) {
			giveBack(state, store, [...owned], attempts, execution);
			throw heldElsewhere(context, heldByLive);
		}
		// The lease lapsed: the next attempt is claimed (its winner reads whether the run before was held through or cut).
		pending = held;
		for (const deliveryId of pending) attempts.set(deliveryId, attempts.get(deliveryId)! + 1);
		const cutOften = pending.filter((deliveryId) => attempts.get(deliveryId)! >= MAX_ATTEMPTS);
		if (cutOften.length > 0) {
			giveBack(state, store, [...owned], attempts, execution);
			throw cutTooOften(context, cutOften, MAX_ATTEMPTS);
		}
	}
	return { owned, runAgain };
}

/** One round of claims of the current attempts: those this execution won, and those another run holds. */
async function claimAttempt(context: IExecuteFunctions, state: TriggerState, store: DeliveryStore, ids: string[], attempts: Map<string, number>, execution: string) {
	const claimOf = (deliveryId: string) => claimEntry(deliveryId, attempts.get(deliveryId)!);
	const tokenOf = (deliveryId: string) => tokenEntry(claimOf(deliveryId), execution);
	const record = (deliveryIds: string[]) =>
		state.storeLine.record(store, deliveryIds.flatMap((deliveryId) => [claimOf(deliveryId), tokenOf(deliveryId)])).catch(() => {
			throw couldNotRecord(context, deliveryIds);
		});
	const recordedBefore = await record(ids);
	const won = ids.filter((deliveryId) => recordedBefore.has(tokenOf(deliveryId)));
	const held = ids.filter((deliveryId) => !won.includes(deliveryId) && recordedBefore.has(claimOf(deliveryId)));
	let pending = ids.filter((deliveryId) => !won.includes(deliveryId) && !held.includes(deliveryId));
	for (let round = 0; round < CLAIM_ROUNDS && pending.length > 0; round++) {
		// A little jitter, so that runs of two processes that overwrote each other do not meet again.
		await sleep(storeTiming.settleMs * (1 + Math.random() / 2));
		const recorded = await record(pending);
		for (const deliveryId of pending) {
			if (recorded.has(tokenOf(deliveryId))) won.push(deliveryId);
			else if (recorded.has(claimOf(deliveryId))) held.push(deliveryId);
		}
		pending = pending.filter((deliveryId) => !won.includes(deliveryId) && !held.includes(deliveryId));
	}
	if (pending.length > 0) throw couldNotRecord(context, pending);
	return { won, held };
}

/** A run that does not go on gives back the attempts it won: their entries removed, their leases let go. */
function giveBack(state: TriggerState, store: DeliveryStore, deliveryIds: string[], attempts: Map<string, number>, execution: string): void {
	if (deliveryIds.length === 0) return;
	state.leases.release(store, deliveryIds);
	const claims = deliveryIds.map((deliveryId) => claimEntry(deliveryId, attempts.get(deliveryId)!));
	state.storeLine.remove(store, [...claims, ...claims.map((claim) => tokenEntry(claim, execution))]);
}

async function filterAsync(ids: string[], test: (deliveryId: string) => Promise<boolean>): Promise<string[]> {
	const passed = await Promise.all(ids.map(test));
	return ids.filter((_, index) => passed[index]);
}

function heldElsewhere(context: IExecuteFunctions, deliveryIds: string[]): NodeOperationError {
	return new NodeOperationError(context.getNode(), `Delivery ${deliveryIds.join(', ')} is being run by another execution in a live n8n process, so this run stops before the next node`, {
		description:
			"Nothing to do: n8n answers the service with an error, so it delivers the event again later. By then the other run has ended (the delivery counts as run) or its process has stopped (the delivery runs again, once).",
	});
}

function claimWithoutStore(state: TriggerState, ids: string[], nowMs: number): Set<string> {
	state.startedWithoutStore ??= new DeliveryLog();
	const started = state.startedWithoutStore;
	const owned = new Set(ids.filter((deliveryId) => !started.has(deliveryId)));
	for (const deliveryId of ids) started.add(deliveryId, nowMs);
	return owned;
}
