/**
 * The claim of a run whose delivery this process accepted: n8n's default setup, where the process that
 * answers a webhook runs its workflow. webhook() let the run start only while no other run of it went on
 * here, so it goes on, unless n8n's store shows that an earlier run of it ended: the delivery's entry
 * without its open entry. That covers what the static data cannot: runs that end together each save the
 * static data without the others' ids (n8n writes it whole, the last save wins), and when the service
 * had stopped waiting, n8n's answer reached only this process's memory, gone with a restart. The entry
 * and the open entry both there: an earlier run started and its end is not known (a crash), so it runs
 * again (runsAgain.ts notes it). The open entry is removed once n8n has answered the run (triggerMemory.ts `answerEnded`).
 * Where n8n has no store, the run goes on.
 */
import type { IExecuteFunctions } from 'n8n-workflow';

import { deliveryEntry, openEntry } from './storeEntries';
import { storeOf } from './storeLine';
import { couldNotRecord } from './claimFailure';
import type { Claimed } from './runsAgain';
import type { TriggerState } from './triggerMemory';

export async function claimOwnDeliveries(context: IExecuteFunctions, state: TriggerState, ids: string[], nowMs: number): Promise<Claimed> {
	const store = storeOf(context);
	const owned = new Set(ids);
	let runAgain: string[] = [];
	if (store && ids.length > 0) {
		state.store = store;
		const recorded = await state.storeLine.record(store, ids.flatMap((deliveryId) => [deliveryEntry(deliveryId), openEntry(deliveryId)])).catch(() => {
			throw couldNotRecord(context, ids);
		});
		const endedBefore = ids.filter((deliveryId) => recorded.has(deliveryEntry(deliveryId)) && !recorded.has(openEntry(deliveryId)));
		for (const deliveryId of endedBefore) {
			owned.delete(deliveryId);
			state.finished.add(deliveryId, nowMs);
		}
		if (endedBefore.length > 0) state.storeLine.remove(store, endedBefore.map(openEntry));
		runAgain = ids.filter((deliveryId) => recorded.has(openEntry(deliveryId)));
	}
	for (const deliveryId of owned) if (state.running.has(deliveryId)) state.ranHere.add(deliveryId);
	return { owned, runAgain };
}
