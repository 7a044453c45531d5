/**
 * Builds webhook requests signed the way the service signs them (Standard Webhooks: HMAC-SHA256
 * over `id.timestamp.body` with the base64-decoded secret), for tests and benchmarks that deliver
 * into n8n directly.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { RETRY_DELAYS_SECONDS } from '../../sandbox/webhooks';
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

/** The tests' pace of the service's retry schedule: 60 times faster (83 ms, 5 s, 30 s, 2 min, 5 min, 10 min). */
export const TEST_RETRY_TIME_SCALE = 1 / 60;

export interface ServiceDelivery {
	/** The last attempt's status (0: no answer). */
	status: number;
	/** The last answer's JSON body ({} when it had none). */
	body: { message?: string; deliveryId?: string; [field: string]: unknown };
	/** Every attempt's status, in order. */
	statuses: number[];
	/** When the last attempt was answered (ms). */
	answeredAt: number;
}

/**
 * How long an attempt waits for n8n's answer before it counts as failed (no answer). The service's own
 * wait is not shown (the sandbox assumes Standard Webhooks' 15 s); a run of a burst answers only when it
 * has ended, up to a minute later on a loaded machine, so the tests wait longer, and an answer n8n
 * never sends (seen in queue mode under load) is retried rather than awaited for ever.
 */
export const TEST_ANSWER_TIMEOUT_MS = 150_000;

/**
 * Delivers one event as the service does: each attempt signed anew (same id, fresh timestamp), sent
 * again after a 5xx (n8n's 503 "Database is not ready!" under load), a 409 (the trigger: this id's run
 * still goes on) or no answer within TEST_ANSWER_TIMEOUT_MS, on the spec's retry schedule (5 s, 5 min,
 * 30 min, 2 h, 5 h, 10 h) times `timeScale`. Another 4xx is returned at once: the service would retry it
 * too, but it is the trigger's own verdict (401 for a bad signature), which the tests read.
 */
export async function deliverAsTheService(url: string, secret: string, type: string, data: object, id: string, timeScale = TEST_RETRY_TIME_SCALE): Promise<ServiceDelivery> {
	const statuses: number[] = [];
	for (let attempt = 0; ; attempt++) {
		const request = signedDelivery(url, secret, type, data, id);
		const sent = { method: 'POST', headers: { 'content-type': 'application/json', ...request.headers }, body: request.body, signal: AbortSignal.timeout(TEST_ANSWER_TIMEOUT_MS) };
		const answer = await fetch(url, sent).then(
			async (response) => ({ status: response.status, body: (await response.json().catch(() => ({}))) as ServiceDelivery['body'] }),
			() => ({ status: 0, body: {} }),
		);
		statuses.push(answer.status);
		const done = (answer.status >= 200 && answer.status < 500 && answer.status !== 409) || attempt === RETRY_DELAYS_SECONDS.length;
		if (done) return { ...answer, statuses, answeredAt: Date.now() };
		await new Promise((resolve) => setTimeout(resolve, RETRY_DELAYS_SECONDS[attempt] * 1000 * timeScale));
	}
}
