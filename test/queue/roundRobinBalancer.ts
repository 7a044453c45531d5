/**
 * A round-robin balancer on loopback in front of n8n's webhook processes, as a queue-mode setup with more
 * than one puts them behind a load balancer: each request goes to the next process, whichever answered
 * the last one. It records which process each delivery attempt reached (by its `webhook-id` header).
 */
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RoundRobinBalancer {
	url: string;
	/** Each attempt's delivery id and the process (its origin) it was sent to, in order. */
	routes: Array<{ deliveryId: string; upstream: string }>;
	close(): Promise<void>;
}

/** `upstreams` is read for each request: a restarted process keeps its origin. */
export async function startRoundRobinBalancer(upstreams: () => string[]): Promise<RoundRobinBalancer> {
	const routes: RoundRobinBalancer['routes'] = [];
	let next = 0;
	const server = createServer((incoming, answer) => {
		const targets = upstreams();
		const upstream = targets[next++ % targets.length];
		routes.push({ deliveryId: String(incoming.headers['webhook-id'] ?? ''), upstream });
		const target = new URL(incoming.url ?? '/', upstream);
		const forwarded = request(target, { method: incoming.method, headers: { ...incoming.headers, host: target.host } }, (response) => {
			answer.writeHead(response.statusCode ?? 502, response.headers);
			response.pipe(answer);
		});
		forwarded.on('error', () => {
			if (!answer.headersSent) answer.writeHead(502).end();
			else answer.destroy();
		});
		// The sender hanging up ends the forwarded request too, as a balancer's client timeout does.
		answer.on('close', () => forwarded.destroy());
		incoming.pipe(forwarded);
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	return {
		url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
		routes,
		close: () =>
			new Promise<void>((resolve) => {
				server.closeAllConnections();
				server.close(() => resolve());
			}),
	};
}
