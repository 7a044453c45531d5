/**
 * Differential test: for messages standardwebhooks signs, and for each alteration, our verifier's
 * verdict equals the library's verify().
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

import {
	decodeSigningSecret,
	readSignatureHeaders,
	verifySignature,
} from '../../../nodes/AgencyInboxTrigger/verifySignature';
import { envelopeOfSize, libraryAccepts, newSigningSecret, signDelivery } from './signedDeliveries';

const secret = newSigningSecret();
const unprefixed = secret.slice('whsec_'.length);
const otherSecret = newSigningSecret();

function oursAccepts(verifyWith: string, body: Buffer, headers: Record<string, string>): boolean {
	const key = decodeSigningSecret(verifyWith);
	if (!key) throw new Error('test secret did not decode');
	return verifySignature(key, body, headers).valid;
}

function minutesFromNow(minutes: number): Date {
	return new Date(Date.now() + minutes * 60_000);
}

const json = JSON.stringify({ type: 'proposal.accepted', data: { proposal: { uid: 'prop-0001', coverLetter: 'Grüße — 日本語 ✓' } } });

interface Case {
	name: string;
	verifyWith: string;
	body: Buffer;
	headers: Record<string, string>;
	/** What both must say; guards against a case that silently tests nothing. */
	expected: boolean;
}

function signed(body: string | Buffer = json, options?: { id?: string; at?: Date }, signWith = secret) {
	return signDelivery(signWith, body, options);
}

function withHeaders(delivery: { body: Buffer; headers: Record<string, string> }, change: (h: Record<string, string>) => void) {
	const headers = { ...delivery.headers };
	change(headers);
	return { body: delivery.body, headers };
}

function omit(headers: Record<string, string>, name: string): Record<string, string> {
	const { [name]: _omitted, ...rest } = headers;
	return rest;
}

const base = signed();
const validSignature = base.headers['webhook-signature'];
const otherSignature = signed(json, { id: base.headers['webhook-id'] }, otherSecret).headers['webhook-signature'];

const cases: Case[] = [
	{ name: 'signed message', verifyWith: secret, ...base, expected: true },
	{ name: '1 KB body', verifyWith: secret, ...signed(envelopeOfSize(1024)), expected: true },
	{ name: '64 KB body', verifyWith: secret, ...signed(envelopeOfSize(64 * 1024)), expected: true },
	{ name: 'empty body', verifyWith: secret, ...signed(''), expected: true },
	{
		name: 'changed body byte',
		verifyWith: secret,
		body: Buffer.from(json.replace('prop-0001', 'prop-0002')),
		headers: base.headers,
		expected: false,
	},
	{
		name: 'whitespace re-encoding',
		verifyWith: secret,
		body: Buffer.from(JSON.stringify(JSON.parse(json), null, 2)),
		headers: base.headers,
		expected: false,
	},
	{
		name: 'trailing newline added',
		verifyWith: secret,
		body: Buffer.from(`${json}\n`),
		headers: base.headers,
		expected: false,
	},
	{
		name: 'unicode re-encoding (\\u escapes)',
		verifyWith: secret,
		body: Buffer.from(json.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)),
		headers: base.headers,
		expected: false,
	},
	{
		name: 'unicode re-encoding (NFD normalisation)',
		verifyWith: secret,
		body: Buffer.from(json.normalize('NFD')),
		headers: base.headers,
		expected: false,
	},
	{ name: 'wrong secret', verifyWith: otherSecret, ...base, expected: false },
	{ name: 'stale timestamp (6 min old)', verifyWith: secret, ...signed(json, { at: minutesFromNow(-6) }), expected: false },
	{ name: 'future timestamp (6 min ahead)', verifyWith: secret, ...signed(json, { at: minutesFromNow(6) }), expected: false },
	{ name: 'old but within tolerance (4 min)', verifyWith: secret, ...signed(json, { at: minutesFromNow(-4) }), expected: true },
	{ name: 'ahead but within tolerance (4 min)', verifyWith: secret, ...signed(json, { at: minutesFromNow(4) }), expected: true },
	{ name: 'missing webhook-id', verifyWith: secret, body: base.body, headers: omit(base.headers, 'webhook-id'), expected: false },
	{
		name: 'missing webhook-timestamp',
		verifyWith: secret,
		body: base.body,
		headers: omit(base.headers, 'webhook-timestamp'),
		expected: false,
	},
	{
		name: 'missing webhook-signature',
		verifyWith: secret,
		body: base.body,
		headers: omit(base.headers, 'webhook-signature'),
		expected: false,
	},
	{
		name: 'changed id',
		verifyWith: secret,
		...withHeaders(base, (h) => (h['webhook-id'] = `${h['webhook-id']}x`)),
		expected: false,
	},
	{
		name: 'changed timestamp (+1 s)',
		verifyWith: secret,
		...withHeaders(base, (h) => (h['webhook-timestamp'] = String(Number(h['webhook-timestamp']) + 1))),
		expected: false,
	},
	{
		name: 'non-v1 version',
		verifyWith: secret,
		...withHeaders(base, (h) => (h['webhook-signature'] = validSignature.replace('v1,', 'v2,'))),
		expected: false,
	},
	{
		name: 'v1a version',
		verifyWith: secret,
		...withHeaders(base, (h) => (h['webhook-signature'] = validSignature.replace('v1,', 'v1a,'))),
		expected: false,
	},
	{
		name: 'several signatures, one valid (rotation)',
		verifyWith: secret,
		...withHeaders(base, (h) => (h['webhook-signature'] = `${otherSignature} v2,abc ${validSignature}`)),
		expected: true,
	},
	{
		name: 'several signatures, valid one first',
		verifyWith: secret,
		...withHeaders(base, (h) => (h['webhook-signature'] = `${validSignature} ${otherSignature}`)),
		expected: true,
	},
	{
		name: 'several signatures, none valid',
		verifyWith: secret,
		...withHeaders(base, (h) => (h['webhook-signature'] = `${otherSignature} v1,${'A'.repeat(44)}`)),
		expected: false,
	},
	{
		name: 'signature without its version',
		verifyWith: secret,
		...withHeaders(base, (h) => (h['webhook-signature'] = validSignature.slice(3))),
		expected: false,
	},
	{
		name: 'truncated signature',
		verifyWith: secret,
		...withHeaders(base, (h) => (h['webhook-signature'] = validSignature.slice(0, -2))),
		expected: false,
	},
	{
		name: 'signature with different letter case',
		verifyWith: secret,
		...withHeaders(base, (h) => (h['webhook-signature'] = `v1,${validSignature.slice(3).toLowerCase()}`)),
		expected: false,
	},
	{ name: 'signed with whsec_, verified without prefix', verifyWith: unprefixed, ...base, expected: true },
	{
		name: 'signed without prefix, verified with whsec_',
		verifyWith: secret,
		...signed(json, undefined, unprefixed),
		expected: true,
	},
	{
		name: 'signed and verified without prefix',
		verifyWith: unprefixed,
		...signed(json, undefined, unprefixed),
		expected: true,
	},
];

describe('signature verification equals standardwebhooks', () => {
	it.each(cases)('$name', ({ verifyWith, body, headers, expected }) => {
		const library = libraryAccepts(verifyWith, body, headers);
		expect(library).toBe(expected);
		expect(oursAccepts(verifyWith, body, headers)).toBe(library);
	});

	it('agrees on 300 random single-byte alterations of body and headers', () => {
		const delivery = signed(envelopeOfSize(600));
		const parts = ['body', 'webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;
		let disagreements = 0;
		let accepted = 0;
		for (let round = 0; round < 300; round++) {
			const part = parts[round % parts.length];
			const body = Buffer.from(delivery.body);
			const headers = { ...delivery.headers };
			const bytes = part === 'body' ? body : Buffer.from(headers[part]);
			const position = randomBytes(2).readUInt16BE() % bytes.length;
			bytes[position] = 0x20 + (randomBytes(1)[0] % 0x5f); // a printable ASCII byte, sometimes the same one
			if (part !== 'body') headers[part] = bytes.toString('latin1');
			const library = libraryAccepts(secret, body, headers);
			if (library) accepted++;
			if (oursAccepts(secret, body, headers) !== library) disagreements++;
		}
		expect(disagreements).toBe(0);
		expect(accepted).toBeLessThan(300);
	});

	it('agrees when an altered byte makes the body invalid UTF-8', () => {
		const body = Buffer.concat([Buffer.from('{"t":"'), Buffer.from([0xc3, 0xa9]), Buffer.from('"}')]);
		const delivery = signed(body);
		const altered = Buffer.from(delivery.body);
		altered[6] = 0xe9; // Latin-1 é instead of UTF-8 é
		expect(libraryAccepts(secret, delivery.body, delivery.headers)).toBe(true);
		expect(oursAccepts(secret, delivery.body, delivery.headers)).toBe(true);
		expect(libraryAccepts(secret, altered, delivery.headers)).toBe(false);
		expect(oursAccepts(secret, altered, delivery.headers)).toBe(false);
	});
});

describe('where the verifier deliberately goes beyond the library', () => {
	it('reads svix-* headers as well as webhook-*', () => {
		const headers = Object.fromEntries(Object.entries(base.headers).map(([k, v]) => [k.replace('webhook-', 'svix-'), v]));
		expect(oursAccepts(secret, base.body, headers)).toBe(true);
		expect(readSignatureHeaders(headers)?.id).toBe(base.headers['webhook-id']);
	});

	it('does not mix header prefixes', () => {
		const headers = { 'webhook-id': base.headers['webhook-id'], 'svix-timestamp': base.headers['webhook-timestamp'], 'svix-signature': validSignature };
		expect(readSignatureHeaders(headers)).toBeUndefined();
	});

	it('refuses a timestamp header that is not whole seconds, which the library reads leniently', () => {
		const headers = { ...base.headers, 'webhook-timestamp': `${base.headers['webhook-timestamp']}abc` };
		expect(libraryAccepts(secret, base.body, headers)).toBe(true);
		expect(verifySignature(decodeSigningSecret(secret)!, base.body, headers)).toEqual({
			valid: false,
			reason: 'Invalid signature timestamp',
		});
	});

	it('tolerates whitespace around a pasted secret; refuses what is not base64 with a message free of the secret', () => {
		expect(decodeSigningSecret(`  ${secret}\n`)).toEqual(decodeSigningSecret(secret));
		expect(decodeSigningSecret('whsec_not base64!')).toBeUndefined();
		expect(decodeSigningSecret('whsec_')).toBeUndefined();
		expect(() => new Webhook('whsec_not base64!')).toThrow();
	});

	it('gives the reason of a refusal', () => {
		const key = decodeSigningSecret(secret)!;
		const stale = signed(json, { at: minutesFromNow(-10) });
		expect(verifySignature(key, stale.body, stale.headers)).toMatchObject({ reason: 'Message timestamp too old' });
		const future = signed(json, { at: minutesFromNow(10) });
		expect(verifySignature(key, future.body, future.headers)).toMatchObject({ reason: 'Message timestamp too new' });
		expect(verifySignature(key, base.body, {})).toMatchObject({ valid: false, reason: expect.stringContaining('Missing') });
	});
});
