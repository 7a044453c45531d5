import type { IDataObject } from 'n8n-workflow';

/** The event kinds of the spec, in the order the node offers them. */
export const EVENT_TYPES = [
	'proposal.accepted',
	'chat.message.sent',
	'bid_intent.scheduled',
	'message.attempt.exhausted',
] as const;

/** Label of a delivery whose type could not be told: it runs only under "All Events". */
export const UNKNOWN_EVENT = 'unknown';

export interface WebhookEvent {
	/** One of EVENT_TYPES, another explicit type the service sent, or UNKNOWN_EVENT. */
	event: string;
	/** The event's own time from the envelope, when it carries a valid one. */
	timestamp?: string;
	/** The object under `data` for an enveloped body, else the body itself. */
	payload: IDataObject;
}

const ENVELOPE_KEYS = ['type', 'eventType', 'timestamp', 'data'];

function isObject(value: unknown): value is IDataObject {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function hasStrings(value: unknown, ...keys: string[]): boolean {
	return isObject(value) && keys.every((key) => typeof value[key] === 'string');
}

/** The event kind a payload's keys imply, by the spec's payload shapes. */
export function eventTypeFromShape(payload: IDataObject): string | undefined {
	if (isObject(payload.proposal) && isObject(payload.job)) return 'proposal.accepted';
	if (hasStrings(payload.message, 'text') && isObject(payload.chat)) return 'chat.message.sent';
	if (typeof payload.jobUid === 'string' && typeof payload.bidId === 'string') return 'bid_intent.scheduled';
	return undefined;
}

function explicitType(body: IDataObject): string | undefined {
	for (const key of ['type', 'eventType']) {
		const value = body[key];
		if (typeof value === 'string' && value.trim() !== '') return value.trim();
	}
	return undefined;
}

function toIsoTimestamp(value: unknown): string | undefined {
	if (typeof value !== 'string' && typeof value !== 'number') return undefined;
	const date = new Date(value);
	return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/** The payload beside an explicit type: `data` when it is an object, else the body without envelope keys. */
function payloadOf(body: IDataObject): IDataObject {
	if (isObject(body.data)) return body.data;
	return Object.fromEntries(Object.entries(body).filter(([key]) => !ENVELOPE_KEYS.includes(key)));
}

/**
 * Reads one delivery, whichever form the service uses (the spec leaves the envelope open):
 * `{type|eventType, timestamp, data}`, or the payload keys at the top level of the body.
 * The explicit type wins; without one, the shape of the payload decides.
 */
export function readEnvelope(body: unknown): WebhookEvent {
	if (!isObject(body)) return { event: UNKNOWN_EVENT, payload: { body: body as IDataObject } };
	const timestamp = toIsoTimestamp(body.timestamp);
	const type = explicitType(body);
	if (type) return { event: type, timestamp, payload: payloadOf(body) };
	const topLevelType = eventTypeFromShape(body);
	if (topLevelType) return { event: topLevelType, timestamp, payload: body };
	if (isObject(body.data)) {
		const nestedType = eventTypeFromShape(body.data);
		if (nestedType) return { event: nestedType, timestamp, payload: body.data };
	}
	return { event: UNKNOWN_EVENT, timestamp, payload: body };
}

/** Whether the node's event selection lets this event start a run. */
export function isEventSelected(event: string, selected: string[]): boolean {
	if (selected.includes('*')) return true;
	return event !== UNKNOWN_EVENT && selected.includes(event);
}
