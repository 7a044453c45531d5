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

/**
 * Ids accepted by this n8n process, per trigger node (workflow id and node id). n8n loads static data
 * before each delivery and writes it back after: two overlapping deliveries start from the same data
 * and the later write drops the earlier one's id. This memory is checked and updated with no await in
 * between, so no overlap slips through within one process; static data carries ids across restarts.
 */
const acceptedInProcess = new Map<string, AcceptedDelivery[]>();

function acceptedDeliveries(staticData: IDataObject): AcceptedDelivery[] {
	const stored = staticData[STATIC_DATA_KEY];
	return Array.isArray(stored) ? (stored as unknown as AcceptedDelivery[]) : [];
}

/** The list with the delivery added, without expired entries, capped to the newest ones. */
function withDelivery(accepted: AcceptedDelivery[], deliveryId: string, nowMs: number): AcceptedDelivery[] {
	const oldestKept = nowMs - DELIVERY_MEMORY_MS;
	const kept = accepted.filter(([id, at]) => at >= oldestKept && id !== deliveryId);
	kept.push([deliveryId, nowMs]);
	return kept.slice(-MAX_REMEMBERED_DELIVERIES);
}

const includes = (accepted: AcceptedDelivery[] | undefined, deliveryId: string) =>
	accepted?.some(([id]) => id === deliveryId) ?? false;

/** `trigger` names the trigger node: its workflow's id and its node id. */
export function wasAccepted(staticData: IDataObject, trigger: string, deliveryId: string): boolean {
	return includes(acceptedInProcess.get(trigger), deliveryId) || includes(acceptedDeliveries(staticData), deliveryId);
}

/** Remembers an accepted delivery in this process and in the node's static data, which n8n persists. */
export function rememberAccepted(
	staticData: IDataObject,
	trigger: string,
	deliveryId: string,
	nowMs: number = Date.now(),
): void {
	acceptedInProcess.set(trigger, withDelivery(acceptedInProcess.get(trigger) ?? [], deliveryId, nowMs));
	staticData[STATIC_DATA_KEY] = withDelivery(acceptedDeliveries(staticData), deliveryId, nowMs) as unknown as IDataObject[];
}
