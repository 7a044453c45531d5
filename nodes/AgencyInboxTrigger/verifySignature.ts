import { createHmac, timingSafeEqual } from 'node:crypto';

/** Standard Webhooks: deliveries older or newer than this are replays or clock errors. */
export const TIMESTAMP_TOLERANCE_SECONDS = 5 * 60;

const SECRET_PREFIX = 'whsec_';
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** The sender writes whole seconds; anything else is refused rather than reinterpreted. */
const UNIX_SECONDS = /^[0-9]{1,15}$/;

export type HeaderValue = string | string[] | undefined;
export type IncomingHeaders = Record<string, HeaderValue>;

export interface SignatureHeaders {
	id: string;
	timestamp: string;
	signature: string;
}

export type VerificationResult =
	| { valid: true; id: string; timestampSeconds: number }
	| { valid: false; reason: string };

/**
 * Turns a pasted signing secret into key bytes: an optional `whsec_` prefix, then standard base64.
 * Returns undefined for anything else, so the caller can say which setting is wrong without echoing it.
 */
export function decodeSigningSecret(secret: string): Buffer | undefined {
	const trimmed = secret.trim();
	const encoded = trimmed.startsWith(SECRET_PREFIX) ? trimmed.slice(SECRET_PREFIX.length) : trimmed;
	if (encoded.length === 0 || !BASE64.test(encoded)) return undefined;
	return Buffer.from(encoded, 'base64');
}

function firstHeader(headers: IncomingHeaders, name: string): string | undefined {
	const value = headers[name];
	return Array.isArray(value) ? value[0] : value;
}

/**
 * The id, timestamp and signature headers, under the `webhook-` names or the `svix-` names that
 * senders built on Svix use. A set is taken whole from one prefix, never mixed.
 * Header names must be lowercase, as Node's http module delivers them.
 */
export function readSignatureHeaders(headers: IncomingHeaders): SignatureHeaders | undefined {
	for (const prefix of ['webhook', 'svix']) {
		const id = firstHeader(headers, `${prefix}-id`);
		const timestamp = firstHeader(headers, `${prefix}-timestamp`);
		const signature = firstHeader(headers, `${prefix}-signature`);
		if (id && timestamp && signature) return { id, timestamp, signature };
	}
	return undefined;
}

/** base64 HMAC-SHA256 of `id.timestamp.body`, the body taken byte for byte. */
export function computeSignature(key: Buffer, id: string, timestamp: string, rawBody: Buffer): string {
	return createHmac('sha256', key).update(`${id}.${timestamp}.`).update(rawBody).digest('base64');
}

/** Every `v1,<signature>` entry of a space-separated header (several while secrets are rotated). */
function v1Signatures(header: string): string[] {
	const signatures: string[] = [];
	for (const entry of header.split(' ')) {
		const [version, signature] = entry.split(',');
		if (version === 'v1' && signature !== undefined) signatures.push(signature);
	}
	return signatures;
}

function constantTimeEquals(expected: Buffer, candidate: string): boolean {
	const candidateBytes = Buffer.from(candidate);
	// Lengths are public (every valid signature is 44 characters); only equal lengths are compared.
	return candidateBytes.length === expected.length && timingSafeEqual(candidateBytes, expected);
}

export function verifySignature(
	key: Buffer,
	rawBody: Buffer,
	headers: IncomingHeaders,
	nowSeconds: number = Math.floor(Date.now() / 1000),
): VerificationResult {
	const signed = readSignatureHeaders(headers);
	if (!signed) return { valid: false, reason: 'Missing signature headers (webhook-id, webhook-timestamp, webhook-signature)' };
	if (!UNIX_SECONDS.test(signed.timestamp)) return { valid: false, reason: 'Invalid signature timestamp' };
	const timestampSeconds = Number(signed.timestamp);
	if (nowSeconds - timestampSeconds > TIMESTAMP_TOLERANCE_SECONDS) return { valid: false, reason: 'Message timestamp too old' };
	if (timestampSeconds - nowSeconds > TIMESTAMP_TOLERANCE_SECONDS) return { valid: false, reason: 'Message timestamp too new' };
	// Signed as the sender wrote the number: without leading zeros.
	const expected = Buffer.from(computeSignature(key, signed.id, String(timestampSeconds), rawBody));
	// No early exit: each v1 entry costs the same whether or not an earlier one matched.
	let matched = false;
	for (const candidate of v1Signatures(signed.signature)) {
		if (constantTimeEquals(expected, candidate)) matched = true;
	}
	if (!matched) return { valid: false, reason: 'No matching signature found' };
	return { valid: true, id: signed.id, timestampSeconds };
}
