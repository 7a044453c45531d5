import type { IDataObject } from 'n8n-workflow';

/**
 * How many accepted delivery ids are remembered, and for how long. Replays of a captured request
 * are already refused after 5 minutes by the timestamp check; what the memory must cover is the
 * service's retries of a delivery whose 200 got lost, and those come 5 s, 5 min, 30 min, 2 h, 5 h
 * and 10 h after a failure (17.6 h in all). A day of ids, capped so workflow static data stays small.
 */
export const MAX_REMEMBERED_DELIVERIES = 1000;
export const DELIVERY_MEMORY_MS = 24 * 60 * 60 * 1000;

/** [delivery id, accepted at (ms since epoch)], oldest first. */
type AcceptedDelivery = [string, number];

const STATIC_DATA_KEY = 'acceptedDeliveries';

function acceptedDeliveries(staticData: IDataObject): AcceptedDelivery[] {
	const stored = staticData[STATIC_DATA_KEY];
	return Array.isArray(stored) ? (stored as unknown as AcceptedDelivery[]) : [];
}

export function wasAccepted(staticData: IDataObject, deliveryId: string): boolean {
	return acceptedDeliveries(staticData).some(([id]) => id === deliveryId);
}

/** Remembers an accepted delivery in the node's static data, which n8n persists with the workflow. */
export function rememberAccepted(staticData: IDataObject, deliveryId: string, nowMs: number = Date.now()): void {
	const oldestKept = nowMs - DELIVERY_MEMORY_MS;
	const kept = acceptedDeliveries(staticData).filter(([id, at]) => at >= oldestKept && id !== deliveryId);
	kept.push([deliveryId, nowMs]);
	staticData[STATIC_DATA_KEY] = kept.slice(-MAX_REMEMBERED_DELIVERIES) as unknown as IDataObject[];
}
