/** The delivery-id memory: 18 hours of ids (the retries span 17.6 h), small, merged across processes and runs. */
import { DELIVERY_MEMORY_MS, DeliveryLog, MAX_CARRIED_DELIVERIES, MAX_REMEMBERED_DELIVERIES, isStored } from '../../../nodes/AgencyInboxTrigger/deliveryLog';

const HOUR = 60 * 60 * 1000;
const now = Date.UTC(2026, 10, 23, 12, 30);

describe('DeliveryLog', () => {
	it('remembers an id for at least 18 hours (the service retries for 17.6), then forgets it', () => {
		const log = new DeliveryLog();
		log.add('msg_a', now);
		log.add('msg_b', now + 17.6 * HOUR);
		expect(log.has('msg_a')).toBe(true);
		log.add('msg_at_18_hours', now + DELIVERY_MEMORY_MS);
		expect(log.has('msg_a')).toBe(true);
		log.add('msg_c', now + DELIVERY_MEMORY_MS + 2 * HOUR);
		expect(log.has('msg_a')).toBe(false);
		expect(log.has('msg_b')).toBe(true);
		expect(log.has('msg_never')).toBe(false);
	});

	it('stores 10,000 ids of 18 hours in about 8 bytes each', () => {
		const log = new DeliveryLog();
		for (let index = 0; index < 10_000; index++) log.add(`msg_${index}`, now + (index * 18 * HOUR) / 10_000 - HOUR);
		const stored = JSON.stringify(log.buckets);
		expect(stored.length).toBeGreaterThanOrEqual(80_000);
		expect(stored.length).toBeLessThan(81_000);
		expect(log.has('msg_0')).toBe(true);
		expect(log.has('msg_9999')).toBe(true);
	});

	it('keeps at most MAX_REMEMBERED_DELIVERIES, dropping the oldest hours first, and says until when it may miss a re-delivery', () => {
		const log = new DeliveryLog();
		const perHour = MAX_REMEMBERED_DELIVERIES / 10;
		for (let hour = 0; hour < 10; hour++) {
			for (let index = 0; index < perHour; index++) log.add(`msg_${hour}_${index}`, now + hour * HOUR);
		}
		expect(log.incompleteUntil).toBe(0);
		for (let index = 0; index < perHour; index++) log.add(`msg_10_${index}`, now + 10 * HOUR);
		expect(log.has('msg_0_0')).toBe(false);
		expect(log.has('msg_1_0')).toBe(true);
		expect(log.has(`msg_10_${perHour - 1}`)).toBe(true);
		// msg_0_* were accepted in the hour starting at 12:00: a retry of one could come until 18 hours after that hour.
		expect(log.incompleteUntil).toBe(Date.UTC(2026, 10, 23, 13) + DELIVERY_MEMORY_MS);
		// What another process still stored of the dropped hour is not taken back in.
		const elsewhere = new DeliveryLog();
		elsewhere.add('msg_0_0', now);
		log.absorb(JSON.parse(JSON.stringify(elsewhere.buckets)), now + 10 * HOUR);
		expect(log.has('msg_0_0')).toBe(false);
	});

	it('hands on the newest ids of this hour and the last, at most MAX_CARRIED_DELIVERIES (8 KB)', () => {
		const log = new DeliveryLog();
		log.add('msg_two_hours_ago', now - 2 * HOUR);
		log.add('msg_last_hour', now - HOUR);
		for (let index = 0; index < MAX_CARRIED_DELIVERIES; index++) log.add(`msg_now_${index}`, now);
		const recent = log.recent(now);
		expect(JSON.stringify(recent).length).toBeLessThan(8_100);
		expect(isStored(recent, `msg_now_${MAX_CARRIED_DELIVERIES - 1}`)).toBe(true);
		expect(isStored(recent, 'msg_now_0')).toBe(true);
		expect(isStored(recent, 'msg_last_hour')).toBe(false);
		log.add('msg_now_one_more', now);
		expect(isStored(log.recent(now), 'msg_now_0')).toBe(false);
		const quiet = new DeliveryLog();
		quiet.add('msg_two_hours_ago', now - 2 * HOUR);
		quiet.add('msg_last_hour', now - HOUR);
		expect(isStored(quiet.recent(now), 'msg_last_hour')).toBe(true);
		expect(isStored(quiet.recent(now), 'msg_two_hours_ago')).toBe(false);
	});

	it('absorbs what another process stored, and what 0.1.0 stored', () => {
		const elsewhere = new DeliveryLog();
		elsewhere.add('msg_elsewhere', now);
		const log = new DeliveryLog();
		log.add('msg_here', now);
		log.absorb(JSON.parse(JSON.stringify(elsewhere.buckets)), now);
		log.absorb([['msg_legacy', now - HOUR]], now);
		expect(['msg_here', 'msg_elsewhere', 'msg_legacy'].map((id) => log.has(id))).toEqual([true, true, true]);
		// Absorbing its own saved form again adds nothing.
		const before = JSON.stringify(log.buckets);
		log.absorb(JSON.parse(before), now);
		expect(JSON.stringify(log.buckets)).toBe(before);
	});

	it('does not take back ids that expired while another process still stored them', () => {
		const elsewhere = new DeliveryLog();
		elsewhere.add('msg_old', now - DELIVERY_MEMORY_MS - 2 * HOUR);
		const log = new DeliveryLog();
		log.absorb(JSON.parse(JSON.stringify(elsewhere.buckets)), now);
		expect(log.has('msg_old')).toBe(false);
		expect(log.buckets).toEqual({});
	});

	it('ignores stored values of another shape', () => {
		const log = new DeliveryLog();
		for (const junk of [null, 'text', 42, { notAnHour: 'abcdefgh' }, [['id', 'not a time']]]) log.absorb(junk, now);
		expect(log.buckets).toEqual({});
	});
	it('gives the stored form with a run\'s own ids added, the log unchanged, each id once', () => {
		const log = new DeliveryLog();
		log.add('msg_finished', now);
		const withOwn = log.storedWith(['msg_own', 'msg_own', 'msg_finished'], now);
		expect(isStored(withOwn, 'msg_own')).toBe(true);
		expect(isStored(withOwn, 'msg_finished')).toBe(true);
		expect(JSON.stringify(withOwn).length).toBe(JSON.stringify(log.buckets).length + 8);
		expect(log.has('msg_own')).toBe(false);
	});

	it('tells whether a stored form lacks any of its ids', () => {
		const log = new DeliveryLog();
		for (const id of ['msg_1', 'msg_2']) log.add(id, now);
		expect(log.isMissingFrom(JSON.parse(JSON.stringify(log.buckets)))).toBe(false);
		const partial = new DeliveryLog();
		partial.add('msg_2', now);
		expect(log.isMissingFrom(JSON.parse(JSON.stringify(partial.buckets)))).toBe(true);
		expect(log.isMissingFrom(undefined)).toBe(true);
		expect(new DeliveryLog().isMissingFrom(undefined)).toBe(false);
		// The same ids stored in another hour's bucket (another process accepted them an hour earlier).
		const earlier = new DeliveryLog();
		for (const id of ['msg_1', 'msg_2', 'msg_3']) earlier.add(id, now - HOUR);
		expect(log.isMissingFrom(JSON.parse(JSON.stringify(earlier.buckets)))).toBe(false);
	});
});
