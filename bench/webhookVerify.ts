/**
 * Verification time per delivery: the trigger's node:crypto verifier against standardwebhooks'
 * verify() on the same signed deliveries (1 KB and 64 KB bodies). Target: ours at least 2x faster.
 * Prints; never fails.
 *
 *   node --require ts-node/register/transpile-only bench/webhookVerify.ts
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

import { decodeSigningSecret, verifySignature } from '../nodes/AgencyInboxTrigger/verifySignature';

const TARGET_RATIO = 2;
const secret = `whsec_${randomBytes(24).toString('base64')}`;

function signedDelivery(size: number) {
	const envelope = JSON.stringify({ type: 'chat.message.sent', timestamp: new Date().toISOString(), data: { message: { text: '' } } });
	const text = 'Can we talk about the proposal tomorrow? '.repeat(size).slice(0, size - envelope.length);
	const body = Buffer.from(envelope.replace('"text":""', `"text":"${text}"`));
	const id = `msg_${randomBytes(8).toString('hex')}`;
	const at = new Date();
	const headers = {
		'webhook-id': id,
		'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
		'webhook-signature': new Webhook(secret).sign(id, at, body.toString('utf8')),
	};
	return { body, headers };
}

/** Mean microseconds per call over a fixed wall-clock budget, after a warm-up. */
function microsecondsPerCall(run: () => void, budgetMs = 700): number {
	for (let i = 0; i < 200; i++) run();
	let calls = 0;
	const start = performance.now();
	while (performance.now() - start < budgetMs) {
		for (let i = 0; i < 20; i++) run();
		calls += 20;
	}
	return ((performance.now() - start) * 1000) / calls;
}

function main() {
	const library = new Webhook(secret); // built once: the library's most favourable case
	console.log('Webhook signature verification per delivery (ours: node:crypto, secret decoded per delivery; library: standardwebhooks, JSON parsing off)');
	console.log(`${'body'.padEnd(16)}${'ours µs'.padStart(10)}${'library µs'.padStart(13)}${'ratio'.padStart(9)}  target >= ${TARGET_RATIO}x`);
	for (const [label, size] of [['1 KB', 1024], ['64 KB', 64 * 1024]] as const) {
		const { body, headers } = signedDelivery(size);
		let oursRejected = 0;
		const ours = microsecondsPerCall(() => {
			if (!verifySignature(decodeSigningSecret(secret)!, body, headers).valid) oursRejected++;
		});
		const theirs = microsecondsPerCall(() => library.verify(body, headers, { jsonParse: false }));
		if (oursRejected > 0) console.log(`  (${label}: ours rejected the valid delivery ${oursRejected} times: the figures below are meaningless)`);
		const ratio = theirs / ours;
		const verdict = ratio >= TARGET_RATIO ? 'meets target' : 'BELOW target';
		console.log(`${`${label} (${body.length} B)`.padEnd(16)}${ours.toFixed(1).padStart(10)}${theirs.toFixed(1).padStart(13)}${`${ratio.toFixed(1)}x`.padStart(9)}  ${verdict}`);
	}
}

main();
