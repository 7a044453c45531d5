/** What the Start From tests of the three polling triggers share: a date some days back, and polling a backfill to its end. */
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import type { TriggerWorkflow } from './engine';

const DAY_MS = 86_400_000;

/**
 * The activation's moment for what a backfill owes: now, returned once the clock has passed it, so that
 * a live change made next carries a later time (one in the same millisecond would count as history).
 */
export async function activationMoment(): Promise<number> {
	const at = Date.now();
	while (Date.now() <= at) await new Promise((resolve) => setTimeout(resolve, 1));
	return at;
}

/** Start From: A Date, `days` days back. */
export const since = (days: number) => ({ startFrom: 'date', startDate: new Date(Date.now() - days * DAY_MS).toISOString() });

/** The backfill's ledger where the trigger keeps it: under `key` of the node's static data, or that key's object. */
function ledgerOf(trigger: TriggerWorkflow, key: string, nested: boolean): IDataObject {
	const nodeData = Object.values(trigger.staticData()).find((data) => (data as IDataObject | undefined)?.[key] !== undefined) as IDataObject | undefined;
	const holder = nested ? (nodeData?.[key] as IDataObject | undefined) : nodeData;
	return (holder?.backfill ?? {}) as IDataObject;
}

/**
 * Polls until the backfill's pass is over (its ledger has `covered` and no pass), mapping each poll's
 * items with `read`. `stateKey`: the static data key that marks the trigger's state; `nested`: whether
 * the ledger lies inside it (else beside it).
 */
export async function pollUntilBackfilled<Item>(
	trigger: TriggerWorkflow,
	state: { key: string; nested: boolean },
	read: (result: INodeExecutionData[][] | null) => Item[],
	limit = 200,
): Promise<Item[][]> {
	const polls: Item[][] = [];
	for (let i = 0; i < limit; i++) {
		polls.push(read(await trigger.poll()));
		const ledger = ledgerOf(trigger, state.key, state.nested);
		if (ledger.pass === undefined && ledger.covered !== undefined) return polls;
	}
	throw new Error(`the backfill did not end within ${limit} polls`);
}
