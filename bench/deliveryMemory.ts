/**
 * A day of 100,000 deliveries (about 70 a minute, in bursts) against the Agency Inbox Trigger's memory
 * of delivery ids: whether a re-delivery 17.6 hours after its first attempt (the end of the service's
 * retry schedule) is still recognised after the static data was saved, n8n restarted and the static
 * data loaded again, the bytes the node keeps in static data and that n8n writes at
 * the end of each run, the time of one save (JSON and SQLite, as n8n does it) and of what the trigger
 * does with its memory per delivery, the size of the store row and of a call to it (n8n's
 * deduplication store), and the memory one n8n process holds per trigger node. Then the same at the
 * memory's cap, and what happens beyond it. Prints beside the targets; never fails.
 *
 *   node --require ts-node/register/transpile-only bench/deliveryMemory.ts
 *
 * Environment: BENCH_DELIVERIES_PER_DAY (default 100000).
 */
import { createHash, randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { ObservableObject, type IDataObject } from 'n8n-workflow';

import { DELIVERY_MEMORY_MS, DeliveryLog, MAX_REMEMBERED_DELIVERIES } from '../nodes/AgencyInboxTrigger/deliveryLog';
import { STORE_ENTRIES } from '../nodes/AgencyInboxTrigger/onceOnly/storeLine';
import { SELECTED_N8N_VERSION, captureOutput, readInstallation, runtimeEnv } from '../scripts/n8n/install';

const DAY_MS = 24 * 60 * 60 * 1000;
const HOUR_MS = 60 * 60 * 1000;
const RETRIES_SPAN_MS = (5 + 5 * 60 + 30 * 60 + 2 * 3600 + 5 * 3600 + 10 * 3600) * 1000;
const DELIVERIES_PER_DAY = Number(process.env.BENCH_DELIVERIES_PER_DAY || 100_000);
const TARGETS = { saveBytes: 1024 * 1024, saveMs: 20, triggerMicroseconds: 100, processMegabytes: 32 };
const WARM_UP_DELIVERIES = 200;

/** Where the trigger keeps its memory: `getWorkflowStaticData('node')` is `staticData['node:<node name>']`. */
export const TRIGGER_NODE_NAME = 'Agency Inbox Trigger';
const NODE_KEY = `node:${TRIGGER_NODE_NAME}`;
/** The trigger's static data key (MEMORY_KEY in onceOnly/triggerMemory.ts). */
export const DELIVERY_LOG_KEY = 'acceptedDeliveries';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** A delivery id as the service sends them: `msg_` and 23 base62 characters, 27 in all. */
export function serviceDeliveryId(): string {
	return `msg_${Array.from(randomBytes(23), (byte) => BASE62[byte % 62]).join('')}`;
}

/**
 * The times of a day's deliveries up to endMs: about 70 a minute on average, in bursts (a burst of 20
 * to 200 every few minutes on top of an even flow), oldest first.
 */
export function burstyDay(perDay: number, endMs: number): number[] {
	const times: number[] = [];
	const steady = Math.round(perDay * 0.6);
	for (let index = 0; index < steady; index++) times.push(endMs - DAY_MS + (index * DAY_MS) / steady);
	let seed = 11;
	const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
	while (times.length < perDay) {
		const at = endMs - DAY_MS + random() * DAY_MS;
		const size = Math.min(perDay - times.length, 20 + Math.floor(random() * 180));
		for (let index = 0; index < size; index++) times.push(Math.min(endMs, at + index * 50));
	}
	return times.sort((a, b) => a - b);
}

/** A memory that accepted a day of deliveries up to endMs, and the ids with their times. */
export function oneDayOfDeliveries(perDay: number, endMs: number): { log: DeliveryLog; ids: string[]; times: number[] } {
	const log = new DeliveryLog();
	const times = burstyDay(perDay, endMs);
	const ids = times.map(() => serviceDeliveryId());
	ids.forEach((id, index) => log.add(id, times[index]));
	return { log, ids, times };
}

/** The workflow's static data as n8n saves it, with the trigger's memory in it. */
export function staticDataWith(buckets: object): IDataObject {
	return { [NODE_KEY]: { [DELIVERY_LOG_KEY]: buckets } } as IDataObject;
}

/**
 * Whether a re-delivery at the end of the retry schedule is recognised after n8n restarted: the day's
 * static data saved as n8n saves it (JSON), a new process whose trigger has nothing in memory, the
 * static data loaded as n8n loads it for a webhook request and taken in as webhook() does; then every
 * id accepted 17.6 h ago or later is looked up.
 */
function recognisedAfterRestart(staticDataJson: string, ids: string[], times: number[], nowMs: number): { checked: number; recognised: number } {
	const loaded = ObservableObject.create(JSON.parse(staticDataJson), undefined, { ignoreEmptyOnFirstChild: true })[NODE_KEY] as IDataObject;
	const afterRestart = new DeliveryLog();
	afterRestart.absorb(loaded[DELIVERY_LOG_KEY], nowMs);
	const due = ids.filter((_, index) => times[index] >= nowMs - RETRIES_SPAN_MS);
	return { checked: due.length, recognised: due.filter((id) => afterRestart.has(id)).length };
}

interface DeliveryCost {
	/** Microseconds per delivery of the trigger's work. */
	webhook: number;
	execute: number;
	/** Microseconds per delivery of n8n's JSON work on static data: two loads, one save. */
	n8nJson: number;
}

/**
 * Deliveries one after another at perDay, on a simulated clock, as n8n 2.x handles them in one
 * process: the webhook request loads static data (JSON.parse, an ObservableObject), webhook() takes
 * it in, checks the id and adds it; the run loads it again, execute() takes it in and puts the memory
 * into it; n8n saves it when the run ends (JSON.stringify).
 */
function costPerDelivery(perDay: number, timedDeliveries: number): DeliveryCost {
	let now = Date.now();
	const { log } = oneDayOfDeliveries(perDay, now);
	let saved = JSON.stringify(staticDataWith(log.buckets));
	const load = () => ObservableObject.create(JSON.parse(saved), undefined, { ignoreEmptyOnFirstChild: true })[NODE_KEY] as IDataObject;
	const totals = { webhook: 0, execute: 0, n8nJson: 0 };
	for (let index = 0; index < WARM_UP_DELIVERIES + timedDeliveries; index++) {
		now += DAY_MS / perDay;
		const id = serviceDeliveryId();
		const t0 = performance.now();
		const atRequest = load();
		const t1 = performance.now();
		log.absorb(atRequest[DELIVERY_LOG_KEY], now);
		if (!log.has(id)) log.add(id, now);
		const t2 = performance.now();
		const atRunStart = load();
		const t3 = performance.now();
		log.absorb(atRunStart[DELIVERY_LOG_KEY], now);
		atRunStart[DELIVERY_LOG_KEY] = log.buckets;
		const t4 = performance.now();
		saved = JSON.stringify(staticDataWith(log.buckets));
		const t5 = performance.now();
		if (index < WARM_UP_DELIVERIES) continue;
		totals.webhook += t2 - t1;
		totals.execute += t4 - t3;
		totals.n8nJson += t1 - t0 + (t3 - t2) + (t5 - t4);
	}
	const perDelivery = (milliseconds: number) => (milliseconds * 1000) / timedDeliveries;
	return { webhook: perDelivery(totals.webhook), execute: perDelivery(totals.execute), n8nJson: perDelivery(totals.n8nJson) };
}

/** MB of heap one process holds for one trigger node's memory (after a full collection). */
function processMegabytes(perDay: number): number {
	setFlagsFromString('--expose-gc');
	const gc = runInNewContext('gc') as () => void;
	gc();
	const before = process.memoryUsage().heapUsed;
	const { log } = oneDayOfDeliveries(perDay, Date.now());
	gc();
	const held = process.memoryUsage().heapUsed - before;
	if (!log.count) throw new Error('empty memory');
	return held / 1024 / 1024;
}

/** The store row as n8n keeps it: {"mode":"entries","data":[md5 base64 of each entry]}. */
function storeRow(entries: number): string {
	return JSON.stringify({ mode: 'entries', data: Array.from({ length: entries }, () => createHash('md5').update(serviceDeliveryId()).digest('base64')) });
}

/**
 * Milliseconds of one static data save and one store call in SQLite as n8n 2.x does them (its Node
 * 24, built-in SQLite, WAL): JSON.stringify and an UPDATE of the row; a store call reads the row,
 * parses it and writes it back. Undefined when n8n is not installed here.
 */
async function sqliteMs(staticDataJson: string, storeRowJson: string): Promise<{ save: number; load: number; storeCall: number } | undefined> {
	const installation = readInstallation(SELECTED_N8N_VERSION);
	if (!installation) return undefined;
	const dir = os.tmpdir();
	const inputs = path.join(dir, `agency-inbox-bench-${process.pid}.json`);
	writeFileSync(inputs, JSON.stringify({ staticDataJson, storeRowJson }));
	const script = `
		const { DatabaseSync } = require('node:sqlite');
		const fs = require('node:fs');
		const { staticDataJson, storeRowJson } = JSON.parse(fs.readFileSync(process.argv[1], 'utf8'));
		const file = process.argv[1] + '.sqlite';
		const db = new DatabaseSync(file);
		db.exec("PRAGMA journal_mode=WAL; CREATE TABLE workflow_entity (id TEXT PRIMARY KEY, staticData TEXT); CREATE TABLE processed_data (workflowId TEXT, context TEXT, value TEXT, PRIMARY KEY (workflowId, context))");
		db.prepare("INSERT INTO workflow_entity VALUES ('w', ?)").run(staticDataJson);
		db.prepare("INSERT INTO processed_data VALUES ('w', 'n:1', ?)").run(storeRowJson);
		const staticData = JSON.parse(staticDataJson);
		const save = db.prepare("UPDATE workflow_entity SET staticData = ? WHERE id = 'w'");
		const load = db.prepare("SELECT staticData FROM workflow_entity WHERE id = 'w'");
		const readRow = db.prepare("SELECT value FROM processed_data WHERE workflowId = 'w' AND context = 'n:1'");
		const writeRow = db.prepare("UPDATE processed_data SET value = ? WHERE workflowId = 'w' AND context = 'n:1'");
		const timed = (runs, fn) => { for (let i = 0; i < 20; i++) fn(); const t = performance.now(); for (let i = 0; i < runs; i++) fn(); return (performance.now() - t) / runs; };
		const result = {
			save: timed(200, () => save.run(JSON.stringify(staticData))),
			load: timed(200, () => JSON.parse(load.get().staticData)),
			storeCall: timed(200, () => { const row = JSON.parse(readRow.get().value); row.data.push(String(Math.random())); row.data.splice(0, row.data.length - ${STORE_ENTRIES}); writeRow.run(JSON.stringify(row)); }),
		};
		db.close();
		for (const suffix of ['', '-wal', '-shm']) fs.rmSync(file + suffix, { force: true });
		console.log(JSON.stringify(result));`;
	try {
		return JSON.parse(await captureOutput(installation.nodeBinary, ['--no-warnings', '-e', script, inputs], dir, runtimeEnv(installation)));
	} finally {
		rmSync(inputs, { force: true });
	}
}

const kilobytes = (bytes: number) => `${(bytes / 1024).toFixed(0)} KB`;

async function report(perDay: number, withTargets: boolean): Promise<void> {
	const now = Date.now();
	const { log, ids, times } = oneDayOfDeliveries(perDay, now);
	const staticDataJson = JSON.stringify(staticDataWith(log.buckets));
	const row = storeRow(STORE_ENTRIES);
	const retries = recognisedAfterRestart(staticDataJson, ids, times, now);
	const cost = costPerDelivery(perDay, 2_000);
	const ours = cost.webhook + cost.execute;
	const sqlite = await sqliteMs(staticDataJson, row);
	const megabytes = processMegabytes(perDay);
	const verdict = (met: boolean, target: string) => (withTargets ? `  (target <= ${target}: ${met ? 'MET' : 'NOT MET'})` : '');
	console.log(`${perDay.toLocaleString('en-US')} deliveries in a day, in bursts (${Math.round(perDay / 1440)} a minute on average):`);
	console.log(`  re-deliveries 17.6 h after their first attempt, after a save of the static data, an n8n restart and a load: ${retries.recognised.toLocaleString('en-US')} of ${retries.checked.toLocaleString('en-US')} ids accepted since then recognised${log.incompleteUntil > now ? '; the memory is over its cap (a warning in each run)' : ''}`);
	console.log(`  ids remembered: ${log.count.toLocaleString('en-US')} (${DELIVERY_MEMORY_MS / HOUR_MS} to ${DELIVERY_MEMORY_MS / HOUR_MS + 1} h of them)`);
	console.log(`  static data n8n writes at the end of each run: ${kilobytes(staticDataJson.length)}${verdict(staticDataJson.length <= TARGETS.saveBytes, kilobytes(TARGETS.saveBytes))}`);
	if (sqlite) {
		console.log(`  one save in SQLite as n8n does it (JSON.stringify + UPDATE): ${sqlite.save.toFixed(1)} ms${verdict(sqlite.save <= TARGETS.saveMs, `${TARGETS.saveMs} ms`)}; one load (SELECT + JSON.parse, twice per delivery): ${sqlite.load.toFixed(1)} ms`);
		console.log(`  the store row (${STORE_ENTRIES.toLocaleString('en-US')} entries at most): ${kilobytes(row.length)}, one call ${sqlite.storeCall.toFixed(1)} ms (read, parse, write back), whatever the day's volume`);
	} else {
		console.log(`  (n8n ${SELECTED_N8N_VERSION} is not installed here: SQLite times not measured); the store row: ${kilobytes(row.length)} at most`);
	}
	console.log(`  the trigger's own work per delivery: webhook() ${cost.webhook.toFixed(1)} µs + execute() ${cost.execute.toFixed(1)} µs = ${ours.toFixed(1)} µs${verdict(ours <= TARGETS.triggerMicroseconds, `${TARGETS.triggerMicroseconds} µs`)}; n8n's JSON work on static data ${cost.n8nJson.toFixed(0)} µs`);
	console.log(`  memory one n8n process holds per trigger node: ${megabytes.toFixed(1)} MB${verdict(megabytes <= TARGETS.processMegabytes, `${TARGETS.processMegabytes} MB`)}`);
}

async function main(): Promise<void> {
	console.log(`Delivery memory of the Agency Inbox Trigger: 48-bit digests of the ids accepted in the last ${DELIVERY_MEMORY_MS / HOUR_MS} to ${DELIVERY_MEMORY_MS / HOUR_MS + 1} hours, at most ${MAX_REMEMBERED_DELIVERIES.toLocaleString('en-US')}`);
	await report(DELIVERIES_PER_DAY, true);
	// Evenly spread, the cap holds this many a day; in bursts what counts is any 19 hours.
	const evenDayAtCap = Math.floor((MAX_REMEMBERED_DELIVERIES * 24) / (DELIVERY_MEMORY_MS / HOUR_MS + 1));
	console.log(`The guarantee holds while no 19 hours hold more than ${MAX_REMEMBERED_DELIVERIES.toLocaleString('en-US')} deliveries (${evenDayAtCap.toLocaleString('en-US')} a day evenly spread). Beyond:`);
	await report(Math.round(evenDayAtCap * 1.25), false);
}

if (require.main === module) {
	main().catch((error) => console.log(`Delivery memory: not measured: ${error.stack ?? error.message}`));
}
