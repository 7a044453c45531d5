import { createHash } from 'node:crypto';

import type { IDataObject } from 'n8n-workflow';

/**
 * A compact memory of delivery ids: a data structure only (onceOnly/ decides what goes in and where
 * it is kept).
 *
 * What it must cover: the service retries a delivery whose 200 got lost 5 s, 5 min, 30 min, 2 h, 5 h
 * and 10 h after each failure (17.6 h after the first attempt); replays of a captured request are
 * refused after 5 minutes by the timestamp check. So an id is remembered for at least 18 hours.
 *
 * How it is kept small: an id is stored as 48 bits of its SHA-256 (8 base64url characters), in
 * buckets per hour of acceptance, so expiry drops whole buckets (an id stays 18 to 19 hours). A stored
 * form is an object { "<hours since epoch>": "<8 characters per id, concatenated>" }. Two ids share a
 * digest with probability 2^-48 each: at the cap of 120,000 remembered ids, one new delivery in about
 * 2.3 billion would be taken for a re-delivery.
 *
 * Beyond the cap (MAX_REMEMBERED_DELIVERIES within 19 hours) the oldest hours are dropped before their
 * time; `incompleteUntil` then says until when a re-delivery might not be recognised.
 */
export const DELIVERY_MEMORY_MS = 18 * 60 * 60 * 1000;
export const MAX_REMEMBERED_DELIVERIES = 120_000;

const BUCKET_MS = 60 * 60 * 1000;
const DIGEST_CHARS = 8;
/** At most this many digests travel with a delivery's run (8 KB). */
export const MAX_CARRIED_DELIVERIES = 1_000;

/** Hour bucket -> concatenated digests, oldest first within a bucket. */
export type StoredDeliveries = Record<string, string>;

function deliveryDigest(deliveryId: string): string {
	return createHash('sha256').update(deliveryId).digest('base64url').slice(0, DIGEST_CHARS);
}

function digestsOf(bucket: string): string[] {
	const digests: string[] = [];
	for (let offset = 0; offset + DIGEST_CHARS <= bucket.length; offset += DIGEST_CHARS) {
		digests.push(bucket.slice(offset, offset + DIGEST_CHARS));
	}
	return digests;
}

/** The 0.1.0 form: [delivery id, accepted at in ms] pairs. */
function isLegacyList(value: unknown): value is Array<[string, number]> {
	return Array.isArray(value) && value.every((entry) => Array.isArray(entry) && typeof entry[0] === 'string' && typeof entry[1] === 'number');
}

/** The hour buckets of a stored form, as [hour, digests] pairs; other shapes hold none. */
function storedBuckets(value: unknown): Array<[string, string]> {
	if (isLegacyList(value)) {
		const buckets: StoredDeliveries = {};
		for (const [id, acceptedAt] of value) {
			const hour = String(Math.floor(acceptedAt / BUCKET_MS));
			buckets[hour] = (buckets[hour] ?? '') + deliveryDigest(id);
		}
		return Object.entries(buckets);
	}
	if (!value || typeof value !== 'object' || Array.isArray(value)) return [];
	return Object.entries(value as IDataObject).filter(
		(entry): entry is [string, string] => typeof entry[1] === 'string' && /^[0-9]+$/.test(entry[0]),
	);
}

function oldestHourKept(nowMs: number): number {
	return Math.floor((nowMs - DELIVERY_MEMORY_MS) / BUCKET_MS);
}

/** Whether the digest stands in the bucket at a digest boundary. */
function bucketHolds(bucket: string, digest: string): boolean {
	for (let at = bucket.indexOf(digest); at !== -1; at = bucket.indexOf(digest, at + 1)) {
		if (at % DIGEST_CHARS === 0) return true;
	}
	return false;
}

/** Whether a stored form (static data as n8n loaded it) holds the id. */
export function isStored(stored: unknown, deliveryId: string): boolean {
	const digest = deliveryDigest(deliveryId);
	return storedBuckets(stored).some(([, bucket]) => bucketHolds(bucket, digest));
}

/**
 * The ids of one trigger node in one process. `buckets` is the stored form, kept up to date, so it
 * can be put into static data as it is.
 */
export class DeliveryLog {
	readonly buckets: StoredDeliveries = {};

	private readonly digests = new Set<string>();

	private size = 0;

	/** The hour of the last expiry check. */
	private checkedHour = -1;

	/** The newest hour dropped; what others stored of it is not taken back in. */
	private forgottenThroughHour = -1;

	/** Until then a re-delivery may go unrecognised: ids younger than the memory were dropped (the cap). */
	incompleteUntil = 0;

	get count(): number {
		return this.size;
	}

	has(deliveryId: string): boolean {
		return this.digests.has(deliveryDigest(deliveryId));
	}

	add(deliveryId: string, nowMs: number): void {
		this.addDigest(deliveryDigest(deliveryId), String(Math.floor(nowMs / BUCKET_MS)));
		this.forgetExpired(nowMs);
	}

	/**
	 * The ids accepted this hour and the hour before, newest last, at most MAX_CARRIED_DELIVERIES, in
	 * the stored form: what a webhook process hands to the run it starts, so the worker that runs it
	 * saves them too.
	 */
	recent(nowMs: number): StoredDeliveries {
		const hourNow = Math.floor(nowMs / BUCKET_MS);
		const recent: StoredDeliveries = {};
		let room = MAX_CARRIED_DELIVERIES;
		for (const hour of [String(hourNow), String(hourNow - 1)]) {
			const bucket = this.buckets[hour];
			if (!bucket || room === 0) continue;
			recent[hour] = bucket.slice(Math.max(0, bucket.length - room * DIGEST_CHARS));
			room -= recent[hour].length / DIGEST_CHARS;
		}
		return recent;
	}

	/**
	 * The stored form with `deliveryIds` added (in this hour's bucket), the log itself unchanged: what a
	 * run puts into static data, so its own delivery is saved at its end and no other run's save has it.
	 */
	storedWith(deliveryIds: string[], nowMs: number): StoredDeliveries {
		const hour = String(Math.floor(nowMs / BUCKET_MS));
		const added = [...new Set(deliveryIds.map(deliveryDigest))].filter((digest) => !this.digests.has(digest));
		return added.length === 0 ? { ...this.buckets } : { ...this.buckets, [hour]: (this.buckets[hour] ?? '') + added.join('') };
	}

	/** Whether a stored form (static data as n8n loaded it) lacks any id this log holds. */
	isMissingFrom(stored: unknown): boolean {
		const storedByHour = new Map(storedBuckets(stored));
		let storedDigests: Set<string> | undefined;
		for (const [hour, bucket] of Object.entries(this.buckets)) {
			if (storedByHour.get(hour) === bucket) continue;
			storedDigests ??= new Set([...storedByHour.values()].flatMap(digestsOf));
			if (digestsOf(bucket).some((digest) => !storedDigests!.has(digest))) return true;
		}
		return false;
	}

	/** Takes in what another process or an earlier run stored (static data as n8n loaded it). */
	absorb(stored: unknown, nowMs: number): void {
		const oldestKept = oldestHourKept(nowMs);
		for (const [hour, bucket] of storedBuckets(stored)) {
			if (Number(hour) < oldestKept || Number(hour) <= this.forgottenThroughHour) continue;
			const ours = this.buckets[hour];
			// The usual case: what was loaded is what this process wrote, or an earlier state of it.
			// (slice and ===, not startsWith, which V8 runs far slower on these strings.)
			if (ours !== undefined && (ours === bucket || (ours.length > bucket.length && ours.slice(0, bucket.length) === bucket))) continue;
			for (const digest of digestsOf(bucket)) this.addDigest(digest, hour);
		}
		this.forgetExpired(nowMs);
	}

	private addDigest(digest: string, hour: string): void {
		if (this.digests.has(digest)) return;
		this.digests.add(digest);
		this.buckets[hour] = (this.buckets[hour] ?? '') + digest;
		this.size++;
	}

	/** Drops expired hours once an hour, and the oldest hours whenever the cap is exceeded. */
	private forgetExpired(nowMs: number): void {
		const hourNow = Math.floor(nowMs / BUCKET_MS);
		if (hourNow === this.checkedHour && this.size <= MAX_REMEMBERED_DELIVERIES) return;
		this.checkedHour = hourNow;
		const oldestKept = oldestHourKept(nowMs);
		const hours = Object.keys(this.buckets).map(Number).sort((a, b) => a - b);
		let dropped = false;
		for (const hour of hours) {
			if (hour >= oldestKept && this.size <= MAX_REMEMBERED_DELIVERIES) break;
			if (hour >= oldestKept) this.incompleteUntil = Math.max(this.incompleteUntil, (hour + 1) * BUCKET_MS + DELIVERY_MEMORY_MS);
			this.forgottenThroughHour = Math.max(this.forgottenThroughHour, hour);
			this.size -= this.buckets[hour].length / DIGEST_CHARS;
			delete this.buckets[hour];
			dropped = true;
		}
		if (dropped) {
			this.digests.clear();
			for (const bucket of Object.values(this.buckets)) for (const digest of digestsOf(bucket)) this.digests.add(digest);
		}
	}
}
