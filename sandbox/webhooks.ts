/**
 * Outgoing webhooks: Standard Webhooks signatures (webhook-id / webhook-timestamp / webhook-signature),
 * the spec's retry schedule scaled by `timeScale`, and `message.attempt.exhausted` after the last failure.
 */
import { request as httpRequest, type ClientRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Webhook } from 'standardwebhooks';

/** Waits before attempts 2..7, in seconds: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h. */
export const RETRY_DELAYS_SECONDS = [5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600];
export const EXHAUSTED_EVENT = 'message.attempt.exhausted';
/**
 * How long an attempt waits for the answer before it counts as failed. The spec names none; Standard
 * Webhooks senders (Svix) wait 15 s, so that is assumed.
 */
export const DEFAULT_ANSWER_TIMEOUT_MS = 15_000;

export interface WebhookEndpoint {
	id: string;
	url: string;
	secret: string;
}

export interface DeliveryAttempt {
	messageId: string;
	endpointId: string;
	type: string;
	attempt: number;
	status?: number;
	error?: string;
	at: string;
}

interface Message {
	id: string;
	type: string;
	body: string;
}

export class WebhookSender {
	readonly endpoints: WebhookEndpoint[] = [];
	readonly deliveries: DeliveryAttempt[] = [];
	private readonly timers = new Set<NodeJS.Timeout>();
	private readonly inFlight = new Set<ClientRequest>();
	private messageCounter = 0;
	private closed = false;
	/** Raised by forgetPending(): an attempt of an earlier generation is neither logged nor retried. */
	private generation = 0;
	/** Retries due while retries are held, sent when they are let go. */
	private heldRetries: Array<() => void> = [];
	/** Whether retries wait (holdRetries) instead of going out when due. */
	private retriesHeld = false;

	constructor(
		private readonly defaultSecret: string,
		public timeScale: number,
		/** Not scaled: an answer takes as long as the receiver's run, whatever the schedule's scale. */
		public answerTimeoutMs = DEFAULT_ANSWER_TIMEOUT_MS,
	) {}

	register(url: string, secret?: string): WebhookEndpoint {
		new URL(url); // throws on an invalid URL
		const endpoint = { id: `ep-${String(this.endpoints.length + 1).padStart(3, '0')}`, url, secret: secret ?? this.defaultSecret };
		new Webhook(endpoint.secret); // throws on a secret that is not base64
		this.endpoints.push(endpoint);
		return endpoint;
	}

	/**
	 * Sends an event to every endpoint registered now (or only `endpointId`); returns the message id
	 * shared by all its attempts. An endpoint registered later does not get it: the spec retries
	 * failed deliveries to a registered endpoint, and says nothing of a backlog for new ones.
	 */
	fire(type: string, data: unknown, endpointId?: string): string {
		const targets = endpointId === undefined ? this.endpoints : this.endpoints.filter((e) => e.id === endpointId);
		if (endpointId !== undefined && targets.length === 0) throw new Error(`Unknown webhook endpoint "${endpointId}".`);
		const message: Message = {
			id: `msg_${String(++this.messageCounter).padStart(6, '0')}_${Date.now().toString(36)}`,
			type,
			body: JSON.stringify({ type, timestamp: new Date().toISOString(), data }),
		};
		for (const endpoint of targets) void this.attempt(message, endpoint, 1, this.generation);
		return message.id;
	}

	/**
	 * Forgets every message not yet delivered (a reset: a fresh service): no retry of one is sent, an
	 * answer still awaited is not logged, and the delivery log starts empty. Endpoints stay registered.
	 */
	forgetPending(): void {
		this.generation++;
		for (const timer of this.timers) clearTimeout(timer);
		this.timers.clear();
		this.heldRetries = [];
		this.deliveries.length = 0;
	}

	/** While held, a retry that falls due waits; letting go sends every retry that waited, at once. */
	holdRetries(hold: boolean): void {
		this.retriesHeld = hold;
		if (hold) return;
		const due = this.heldRetries;
		this.heldRetries = [];
		for (const retry of due) retry();
	}

	get holdingRetries(): boolean {
		return this.retriesHeld;
	}

	close(): void {
		this.closed = true;
		for (const timer of this.timers) clearTimeout(timer);
		this.timers.clear();
		this.heldRetries = [];
		for (const req of this.inFlight) req.destroy();
		this.inFlight.clear();
	}

	private async attempt(message: Message, endpoint: WebhookEndpoint, attempt: number, generation: number): Promise<void> {
		if (this.closed) return;
		const outcome = await this.post(message, endpoint);
		if (this.closed || generation !== this.generation) return;
		this.deliveries.push({ messageId: message.id, endpointId: endpoint.id, type: message.type, attempt, ...outcome, at: new Date().toISOString() });
		if (outcome.status !== undefined && outcome.status >= 200 && outcome.status < 300) return;
		if (attempt <= RETRY_DELAYS_SECONDS.length) {
			const timer = setTimeout(() => {
				this.timers.delete(timer);
				const retry = () => void this.attempt(message, endpoint, attempt + 1, generation);
				if (this.retriesHeld) this.heldRetries.push(retry);
				else retry();
			}, RETRY_DELAYS_SECONDS[attempt - 1] * 1000 * this.timeScale);
			this.timers.add(timer);
			return;
		}
		// An exhausted notice about an exhausted notice would never end.
		if (message.type !== EXHAUSTED_EVENT) {
			this.fire(
				EXHAUSTED_EVENT,
				{ msgId: message.id, eventType: message.type, endpointId: endpoint.id, attempts: attempt, lastAttempt: { timestamp: new Date().toISOString(), ...outcome } },
				endpoint.id,
			);
		}
	}

	private post(message: Message, endpoint: WebhookEndpoint): Promise<{ status?: number; error?: string }> {
		const sentAt = new Date();
		const signature = new Webhook(endpoint.secret).sign(message.id, sentAt, message.body);
		const url = new URL(endpoint.url);
		const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
		return new Promise((resolve) => {
			const req = send(
				url,
				{
					method: 'POST',
					agent: false,
					timeout: this.answerTimeoutMs,
					headers: {
						'content-type': 'application/json',
						'content-length': Buffer.byteLength(message.body),
						'user-agent': 'agency-inbox-sandbox-webhooks/1.0',
						'webhook-id': message.id,
						'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
						'webhook-signature': signature,
					},
				},
				(res) => {
					res.resume();
					res.on('end', () => finish({ status: res.statusCode }));
					res.on('error', (error) => finish({ error: error.message }));
				},
			);
			const finish = (outcome: { status?: number; error?: string }) => {
				this.inFlight.delete(req);
				resolve(outcome);
			};
			req.on('timeout', () => req.destroy(new Error(`no answer within ${this.answerTimeoutMs} ms`)));
			req.on('error', (error) => finish({ error: error.message || String(error) }));
			this.inFlight.add(req);
			req.end(message.body);
		});
	}
}
