/**
 * What remembering accepted delivery ids costs at the service's real traffic (issue 11): the bytes
 * the Agency Inbox Trigger keeps in its static data, the bytes n8n writes per save (one save per
 * accepted delivery: the whole JSON of the workflow's static data), and the time per delivery of
 * what the trigger does with its delivery log in webhook() and in execute(), with and without n8n's
 * own JSON.parse on load and JSON.stringify on save. Prints beside the targets; never fails.
 *
 *   node --require ts-node/register/transpile-only bench/deliveryMemory.ts
 *
 * Environment: BENCH_DELIVERIES_PER_DAY (default 10000; the cap of the log is also shown).
 */
import { randomBytes } from 'node:crypto';
import { ObservableObject, type IDataObject } from 'n8n-workflow';

import { DeliveryLog, MAX_REMEMBERED_DELIVERIES } from '../nodes/AgencyInboxTrigger/deliveryLog';

const DAY_MS = 24 * 60 * 60 * 1000;
const DELIVERIES_PER_DAY = Number(process.env.BENCH_DELIVERIES_PER_DAY || 10_000);
const TARGET_MICROSECONDS = 100;
const TARGET_SAVE_BYTES = 100 * 1024;
const WARM_UP_DELIVERIES = 200;

/** Where the trigger keeps its log: `getWorkflowStaticData('node')` is `staticData['node:<node name>']`. */
export const TRIGGER_NODE_NAME = 'Agency Inbox Trigger';
const NODE_KEY = `node:${TRIGGER_NODE_NAME}`;
/** The trigger's static data key (DELIVERY_LOG_KEY in AgencyInboxTrigger.node.ts). */
export const DELIVERY_LOG_KEY = 'acceptedDeliveries';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** A delivery id as the service sends them: `msg_` and 23 base62 characters, 27 in all. */
export function serviceDeliveryId(): string {
	return `msg_${Array.from(randomBytes(23), (byte) => BASE62[byte % 62]).join('')}`;
}

/** A log that accepted `perDay` deliveries spread evenly over the 24 hours up to endMs. */
export function oneDayOfDeliveries(perDay: number, endMs: number): { log: DeliveryLog; ids: string[] } {
	const log = new DeliveryLog();
	const ids: string[] = [];
	for (let index = 1; index <= perDay; index++) {
		const id = serviceDeliveryId();
		log.add(id, endMs - DAY_MS + (index * DAY_MS) / perDay);
		ids.push(id);
	}
	return { log, ids };
}

/** The workflow's static data as n8n saves it, with the trigger's log in it. */
export function staticDataWith(buckets: object): IDataObject {
	return { [NODE_KEY]: { [DELIVERY_LOG_KEY]: buckets } } as IDataObject;
}

interface DeliveryCost {
	/** Microseconds per delivery, mean over the timed deliveries. */
	load: number;
	webhook: number;
	execute: number;
	save: number;
	/** Bytes of the largest save. */
	savedBytes: number;
}

/**
 * One accepted delivery after another at perDay, on a simulated clock, as n8n 2.x runs them in one
 * process: the webhook request loads the workflow's static data from the database (JSON.parse, then
 * an ObservableObject), webhook() absorbs it, checks the id and adds it; the run's execute() absorbs
 * the same static data, adds the id and puts the log into it; n8n saves it when the run ends
 * (JSON.stringify of the whole static data).
 */
function costPerDelivery(perDay: number, timedDeliveries: number): DeliveryCost {
	const intervalMs = DAY_MS / perDay;
	let now = Date.now();
	const { log } = oneDayOfDeliveries(perDay, now);
	let saved = JSON.stringify(staticDataWith(log.buckets));
	const totals = { load: 0, webhook: 0, execute: 0, save: 0 };
	let savedBytes = 0;
	let replays = 0;
	for (let index = 0; index < WARM_UP_DELIVERIES + timedDeliveries; index++) {
		now += intervalMs;
		const id = serviceDeliveryId();
		const t0 = performance.now();
		const staticData = ObservableObject.create(JSON.parse(saved), undefined, { ignoreEmptyOnFirstChild: true });
		const nodeData = staticData[NODE_KEY] as IDataObject;
		const t1 = performance.now();
		log.absorb(nodeData[DELIVERY_LOG_KEY], now);
		if (log.has(id)) replays++;
		log.add(id, now);
		const t2 = performance.now();
		log.absorb(nodeData[DELIVERY_LOG_KEY], now);
		log.add(id, now);
		nodeData[DELIVERY_LOG_KEY] = log.buckets;
		const t3 = performance.now();
		saved = JSON.stringify(staticData);
		const t4 = performance.now();
		if (index < WARM_UP_DELIVERIES) continue;
		totals.load += t1 - t0;
		totals.webhook += t2 - t1;
		totals.execute += t3 - t2;
		totals.save += t4 - t3;
		savedBytes = Math.max(savedBytes, Buffer.byteLength(saved));
	}
	if (replays) console.log(`  (${replays} new ids were taken for re-deliveries: the figures below are meaningless)`);
	const perDelivery = (milliseconds: number) => (milliseconds * 1000) / timedDeliveries;
	return {
		load: perDelivery(totals.load),
		webhook: perDelivery(totals.webhook),
		execute: perDelivery(totals.execute),
		save: perDelivery(totals.save),
		savedBytes,
	};
}

/** Milliseconds for a new process (after a restart) to take in a day of stored ids at its first delivery. */
function absorbAfterRestartMs(stored: string): number {
	const runs = 20;
	const start = performance.now();
	for (let run = 0; run < runs; run++) {
		const staticData = JSON.parse(stored) as Record<string, IDataObject>;
		new DeliveryLog().absorb(staticData[NODE_KEY][DELIVERY_LOG_KEY], Date.now());
	}
	return (performance.now() - start) / runs;
}

const kilobytes = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

function report(perDay: number, timedDeliveries: number, withTargets: boolean): void {
	const { log, ids } = oneDayOfDeliveries(perDay, Date.now());
	const storedBytes = Buffer.byteLength(JSON.stringify(log.buckets));
	const legacyBytes = Buffer.byteLength(JSON.stringify(ids.map((id, index) => [id, Date.now() - DAY_MS + index])));
	const cost = costPerDelivery(perDay, timedDeliveries);
	const ours = cost.webhook + cost.execute;
	const n8ns = cost.load + cost.save;
	const verdict = (met: boolean, target: string) => (withTargets ? `  target <= ${target}: ${met ? 'meets target' : 'ABOVE target'}` : '');
	console.log(`${perDay.toLocaleString('en-US')} deliveries a day (ids of ${ids[0].length} characters, spread over 24 h):`);
	console.log(`  stored (JSON of log.buckets): ${storedBytes.toLocaleString('en-US')} B in ${Object.keys(log.buckets).length} hour buckets, ${(storedBytes / perDay).toFixed(2)} B per id (a plain [id, time] list: ${(legacyBytes / perDay).toFixed(1)} B per id)`);
	console.log(`  written per save (JSON of the workflow's static data, largest seen): ${cost.savedBytes.toLocaleString('en-US')} B = ${kilobytes(cost.savedBytes)}${verdict(cost.savedBytes <= TARGET_SAVE_BYTES, kilobytes(TARGET_SAVE_BYTES))}`);
	console.log(`  µs per delivery, the trigger: webhook() ${cost.webhook.toFixed(1)} (absorb + has + add) + execute() ${cost.execute.toFixed(1)} (absorb + add) = ${ours.toFixed(1)}${verdict(ours <= TARGET_MICROSECONDS, String(TARGET_MICROSECONDS))}`);
	console.log(`  µs per delivery, n8n: load ${cost.load.toFixed(1)} (JSON.parse + ObservableObject) + save ${cost.save.toFixed(1)} (JSON.stringify) = ${n8ns.toFixed(1)}`);
	console.log(`  µs per delivery, persisting in all: ${(ours + n8ns).toFixed(1)} (over ${timedDeliveries.toLocaleString('en-US')} deliveries in a row)`);
	console.log(`  first delivery after a restart (a new process takes in the stored ids once): ${absorbAfterRestartMs(JSON.stringify(staticDataWith(log.buckets))).toFixed(1)} ms`);
}

function main(): void {
	console.log('Delivery memory of the Agency Inbox Trigger: 48-bit digests of the ids accepted in the last 24 h, in hour buckets');
	console.log(`(targets at ${DELIVERIES_PER_DAY.toLocaleString('en-US')} a day, the service's traffic; then at the log's cap; n8n's own cost per webhook request is several ms)`);
	report(DELIVERIES_PER_DAY, 5_000, true);
	if (DELIVERIES_PER_DAY < MAX_REMEMBERED_DELIVERIES) report(MAX_REMEMBERED_DELIVERIES, 1_000, false);
}

if (require.main === module) main();
