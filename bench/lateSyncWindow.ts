/**
 * The Message Trigger's windows of message ids read (lateSync.ts), at their bound: the state's bytes and
 * the end-of-poll trim, before (the last 20 ids of each of the 2,000 rooms kept) and now (40,000 ids
 * over the inbox, up to 500 in a room), with the inbox 500 ids past the total so the trim works. Ids of
 * 24 characters, as the sandbox's. Prints; never fails. Target: the state within 2 MB (the figure the
 * README stated before), the trim within half of what n8n spends on one request of a poll at its
 * defaults (112 ms of CPU, n8nPollCpu.ts).
 */
import { performance } from 'node:perf_hooks';

import { MAX_IDS_KEPT, MAX_IDS_PER_ROOM, MIN_IDS_PER_ROOM, windowsWithinTotal } from '../nodes/AgencyInboxMessageTrigger/lateSync';
import { MAX_ROOMS_KEPT } from '../nodes/AgencyInboxMessageTrigger/state';

const FLOOR = { at: new Date(0).toISOString(), uids: [] };
/** Half of n8n's own CPU for one request at its defaults (docs/benchmarks.md, n8nPollCpu.ts). */
const TRIM_TARGET_MS = 56;
const idOf = (room: number, i: number) => `${String(room).padStart(12, '0')}${String(i).padStart(12, '0')}`;

/** `rooms` rooms of `perRoom` ids, one message a second across the inbox, and room marks as the trigger keeps them. */
function inbox(rooms: number, perRoom: number) {
	let ms = Date.parse('2026-01-01T00:00:00Z');
	return Object.fromEntries(
		Array.from({ length: rooms }, (_, room) => {
			const seen = Object.fromEntries(Array.from({ length: perRoom }, (_, i) => [idOf(room, i), (ms += 1000)]));
			return [idOf(room, 0), { at: new Date(ms).toISOString(), uids: [idOf(room, perRoom - 1)], last: idOf(room, perRoom - 1), count: perRoom, seen, seenFrom: FLOOR }];
		}),
	);
}

function measure(label: string, rooms: ReturnType<typeof inbox>) {
	const started = performance.now();
	let trimmed = rooms;
	for (let i = 0; i < 10; i++) trimmed = windowsWithinTotal(rooms);
	const trimMs = (performance.now() - started) / 10;
	const ids = Object.values(trimmed).reduce((sum, room) => sum + Object.keys(room.seen).length, 0);
	const bytes = Buffer.byteLength(JSON.stringify(trimmed));
	console.log(`${label}: ${ids} ids kept; state ${(bytes / 1024 / 1024).toFixed(2)} MB (÷ 2 MB: ${(bytes / 2 / 1024 / 1024).toFixed(2)}); trim ${trimMs.toFixed(1)} ms (÷ ${TRIM_TARGET_MS} ms: ${(trimMs / TRIM_TARGET_MS).toFixed(2)})`);
}

measure(`before: ${MAX_ROOMS_KEPT} rooms x ${MIN_IDS_PER_ROOM} ids`, inbox(MAX_ROOMS_KEPT, MIN_IDS_PER_ROOM));
measure(`now: ${MAX_IDS_KEPT / MAX_IDS_PER_ROOM + 1} busy rooms x ${MAX_IDS_PER_ROOM} ids (the total + ${MAX_IDS_PER_ROOM}), trimmed`, inbox(MAX_IDS_KEPT / MAX_IDS_PER_ROOM + 1, MAX_IDS_PER_ROOM));
measure(`now: ${MAX_ROOMS_KEPT} rooms x ${MIN_IDS_PER_ROOM} ids and 10 at ${MAX_IDS_PER_ROOM}, trimmed`, { ...inbox(MAX_ROOMS_KEPT - 10, MIN_IDS_PER_ROOM), ...Object.fromEntries(Object.entries(inbox(10, MAX_IDS_PER_ROOM)).map(([id, room]) => [`busy${id}`, room])) });
