/** Signed deliveries for the trigger's tests: signed by standardwebhooks, the service's own library. */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

export function newSigningSecret(): string {
	return `whsec_${randomBytes(24).toString('base64')}`;
}

export interface SignedDelivery {
	body: Buffer;
	headers: Record<string, string>;
}

export function signDelivery(
	secret: string,
	body: string | Buffer,
	{ id = `msg_${randomBytes(8).toString('hex')}`, at = new Date() }: { id?: string; at?: Date } = {},
): SignedDelivery {
	const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
	return {
		body: bytes,
		headers: {
			'webhook-id': id,
			'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
			'webhook-signature': new Webhook(secret).sign(id, at, bytes.toString('utf8')),
		},
	};
}

/** A JSON body of about `size` bytes in the `{type, timestamp, data}` envelope. */
export function envelopeOfSize(size: number, type = 'chat.message.sent'): string {
	const base = { type, timestamp: '2026-01-01T10:00:00.000Z', data: { proposal: { uid: 'prop-0001' }, chat: { id: 'room-001' }, message: { text: '' } } };
	const filler = Math.max(0, size - JSON.stringify(base).length);
	base.data.message.text = 'Hallo, ich hätte eine Frage zu Ihrem Angebot. '.repeat(Math.ceil(filler / 47)).slice(0, filler);
	return JSON.stringify(base);
}

/** The library's verdict: true when verify() accepts. */
export function libraryAccepts(secret: string, body: Buffer, headers: Record<string, string>): boolean {
	try {
		new Webhook(secret).verify(body, headers);
		return true;
	} catch {
		return false;
	}
}
