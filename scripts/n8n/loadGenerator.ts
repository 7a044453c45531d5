/**
 * A small, bounded HTTP load generator for loopback benchmarks: sends a fixed list of prepared
 * requests with a fixed concurrency and stops at a time bound, whichever comes first.
 */
import http from 'node:http';

export interface PreparedRequest {
	url: string;
	headers: Record<string, string>;
	body: string;
}

export interface LoadOptions {
	concurrency: number;
	/** Requests not started by then are skipped. */
	timeLimitMs: number;
}

export interface LoadResult {
	sent: number;
	/** Answers with a 2xx status. */
	ok: number;
	failed: number;
	statuses: Record<string, number>;
	elapsedMs: number;
	/** 2xx answers per second over the whole run. */
	perSecond: number;
	latencyMs: { p50: number; p95: number };
}

/** Sends the requests (POST) over keep-alive connections, `concurrency` in flight at a time. */
export async function runLoad(requests: PreparedRequest[], options: LoadOptions): Promise<LoadResult> {
	const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency });
	const statuses: Record<string, number> = {};
	const latencies: number[] = [];
	let next = 0;
	let ok = 0;
	const startedAt = Date.now();
	const deadline = startedAt + options.timeLimitMs;

	const worker = async () => {
		while (next < requests.length && Date.now() < deadline) {
			const request = requests[next++];
			const sentAt = performance.now();
			const status = await post(agent, request, deadline - Date.now());
			latencies.push(performance.now() - sentAt);
			statuses[status] = (statuses[status] ?? 0) + 1;
			if (/^2\d\d$/.test(status)) ok++;
		}
	};
	await Promise.all(Array.from({ length: options.concurrency }, worker));
	const elapsedMs = Date.now() - startedAt;
	agent.destroy();
	latencies.sort((a, b) => a - b);
	const percentile = (fraction: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * fraction))] ?? 0);
	return {
		sent: latencies.length,
		ok,
		failed: latencies.length - ok,
		statuses,
		elapsedMs,
		perSecond: ok / (elapsedMs / 1000),
		latencyMs: { p50: percentile(0.5), p95: percentile(0.95) },
	};
}

/** Resolves with the status code as text, or the error code when no answer came. */
function post(agent: http.Agent, request: PreparedRequest, timeoutMs: number): Promise<string> {
	return new Promise((resolve) => {
		const outgoing = http.request(
			request.url,
			{
				method: 'POST',
				agent,
				headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(request.body), ...request.headers },
				timeout: Math.max(timeoutMs, 1),
			},
			(response) => {
				response.resume();
				response.on('end', () => resolve(String(response.statusCode)));
				response.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
			},
		);
		outgoing.on('timeout', () => outgoing.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
		outgoing.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
		outgoing.end(request.body);
	});
}
