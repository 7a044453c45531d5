import { createServer, request as httpRequest } from 'node:http';
import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { IDLE_CONNECTION_TIMEOUT_MS } from '../../../sandbox';

export interface ProxiedRequest {
	method: string;
	path: string;
	query: URLSearchParams;
}

/**
 * A loopback HTTP proxy in front of the sandbox. `beforeForward` runs before a request is passed on
 * and may act on the real sandbox (e.g. POST a change between two page requests of one sweep) or
 * return a replacement query string. The trigger still talks HTTP to the real service twin.
 */
export class LoopbackProxy {
	beforeForward?: (request: ProxiedRequest) => Promise<URLSearchParams | void>;

	private server?: Server;

	constructor(private readonly targetOrigin: string) {}

	get origin(): string {
		return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
	}

	async start(): Promise<void> {
		this.server = createServer({ keepAliveTimeout: IDLE_CONNECTION_TIMEOUT_MS }, (incoming, outgoing) => {
			this.forward(incoming)
				.then(({ status, headers, body }) => {
					outgoing.writeHead(status, headers);
					outgoing.end(body);
				})
				.catch((error: Error) => {
					outgoing.writeHead(502);
					outgoing.end(error.message);
				});
		});
		await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
	}

	async close(): Promise<void> {
		this.server?.closeAllConnections();
		await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
	}

	private async forward(incoming: IncomingMessage) {
		const url = new URL(incoming.url!, this.targetOrigin);
		const replacement = await this.beforeForward?.({ method: incoming.method!, path: url.pathname, query: url.searchParams });
		if (replacement) url.search = replacement.toString();
		const requestBody = await readAll(incoming);
		return await new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }>(
			(resolve, reject) => {
				const upstream = httpRequest(
					url,
					{ method: incoming.method, headers: { ...incoming.headers, host: url.host } },
					(response) => {
						readAll(response)
							.then((body) => resolve({ status: response.statusCode!, headers: response.headers, body }))
							.catch(reject);
					},
				);
				upstream.on('error', reject);
				upstream.end(requestBody);
			},
		);
	}
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
	const chunks: Buffer[] = [];
	for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
	return Buffer.concat(chunks);
}
