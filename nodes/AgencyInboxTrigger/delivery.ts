import type { IDataObject } from 'n8n-workflow';

import { readEnvelope } from './envelope';
import type { IncomingHeaders } from './verifySignature';

/** What the trigger reads of n8n's request object (an Express request with n8n's raw body). */
export interface WebhookRequest {
	headers: IncomingHeaders;
	body?: unknown;
	rawBody?: Buffer;
	readRawBody?: () => Promise<void>;
	ip?: string;
	socket?: { remoteAddress?: string };
}

/** The item a delivery becomes: the same shape whichever envelope arrived. */
export interface Delivery {
	event: string;
	/** The webhook-id (or svix-id) header: the same on every retry of one event. */
	deliveryId: string | null;
	/** ISO-8601: the envelope's timestamp, else the signed header's, else the time of receipt. */
	timestamp: string;
	payload: IDataObject;
}

function headerText(headers: IncomingHeaders, name: string): string | undefined {
	const value = headers[name];
	const text = Array.isArray(value) ? value[0] : value;
	return text ? text : undefined;
}

/** The body as JSON from the raw bytes (the ones that were verified); else n8n's parsed body. */
function parsedBody(request: WebhookRequest): unknown {
	if (!request.rawBody?.length) return request.body ?? {};
	const text = request.rawBody.toString('utf8');
	try {
		return JSON.parse(text);
	} catch {
		return { rawBody: text };
	}
}

function unverifiedTimestampSeconds(headers: IncomingHeaders): number | undefined {
	const text = headerText(headers, 'webhook-timestamp') ?? headerText(headers, 'svix-timestamp');
	return text && /^[0-9]{1,15}$/.test(text) ? Number(text) : undefined;
}

export function deliveryFromRequest(
	request: WebhookRequest,
	verified: { id: string; timestampSeconds: number } | undefined,
	now: Date = new Date(),
): Delivery {
	const { event, timestamp, payload } = readEnvelope(parsedBody(request));
	const deliveryId = verified?.id ?? headerText(request.headers, 'webhook-id') ?? headerText(request.headers, 'svix-id');
	const headerSeconds = verified?.timestampSeconds ?? unverifiedTimestampSeconds(request.headers);
	const headerTimestamp = headerSeconds === undefined ? undefined : new Date(headerSeconds * 1000).toISOString();
	return {
		event,
		deliveryId: deliveryId ?? null,
		timestamp: timestamp ?? headerTimestamp ?? now.toISOString(),
		payload,
	};
}
