/**
 * Builds webhook requests signed the way the service signs them (Standard Webhooks: HMAC-SHA256
 * over `id.timestamp.body` with the base64-decoded secret), for tests and benchmarks that deliver
 * into n8n directly.
 */
import { createHmac, randomUUID } from 'node:crypto';
import type { PreparedRequest } from './loadGenerator';

export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
	const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
	return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}

/** A signed delivery of one event: `{type, timestamp, data}` as the sandbox sends it, under a fresh id. */
export function signedDelivery(url: string, secret: string, type: string, data: object, id = `msg_${randomUUID()}`): PreparedRequest {
	const now = new Date();
	const timestampSeconds = Math.floor(now.getTime() / 1000);
	const body = JSON.stringify({ type, timestamp: now.toISOString(), data });
	return {
		url,
		body,
		headers: {
			'webhook-id': id,
			'webhook-timestamp': String(timestampSeconds),
			'webhook-signature': signWebhook(secret, id, timestampSeconds, body),
		},
	};
}
