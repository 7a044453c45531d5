/**
 * Return All over P pages with the same budget R per minute in the credential and the sandbox.
 * Prints wall time / ((ceil(P/R) - 1) * 60 s) (target <= 1.10), the 429 count, and peak memory per
 * 10,000 records. Never fails: it prints what it measured.
 *
 *   node --require ts-node/register/transpile-only bench/actionNodeReturnAll.ts
 *   BENCH_REQUESTS_PER_MINUTE=600 BENCH_PAGES=1000 BENCH_PAGE_SIZE=10 node ... (the defaults)
 */
import type { AgencyInbox as AgencyInboxNode } from '../nodes/AgencyInbox/AgencyInbox.node';
import { startSandbox } from '../sandbox';
import { runNode } from '../test/helpers/engine';

// Under ts-node, Node resolves `AgencyInbox.node` to the codex file AgencyInbox.node.json first.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { AgencyInbox } = require('../nodes/AgencyInbox/AgencyInbox.node.ts') as { AgencyInbox: typeof AgencyInboxNode };

const requestsPerMinute = Number(process.env.BENCH_REQUESTS_PER_MINUTE ?? 600);
const pages = Number(process.env.BENCH_PAGES ?? 1000);
const pageSize = Number(process.env.BENCH_PAGE_SIZE ?? 10);

function megabytes(bytes: number): string {
	return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

async function main() {
	console.log(`Return All: ${pages} pages of ${pageSize}, ${requestsPerMinute} requests per minute (credential and sandbox)`);
	const sandbox = await startSandbox({ requestsPerMinute, proposals: pages * pageSize, pageSize });
	try {
		global.gc?.();
		const baselineHeap = process.memoryUsage().heapUsed;
		let peakHeap = baselineHeap;
		const sampler = setInterval(() => (peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed)), 50);
		const started = Date.now();
		const result = await runNode({
			type: 'agencyInbox',
			nodeType: new AgencyInbox(),
			parameters: { resource: 'proposal', operation: 'getAll', returnAll: true },
			credentials: { agencyInboxApi: { apiKey: sandbox.apiKey, baseUrl: sandbox.url, requestsPerMinute } },
		});
		const wallMs = Date.now() - started;
		clearInterval(sampler);
		peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
		const rate = (await (await fetch(`${sandbox.origin}/_sandbox/rate`)).json()) as { rejected429: number; maxInAnyWindow: number };
		const records = result.items.length;
		const leastMs = (Math.ceil(pages / requestsPerMinute) - 1) * 60_000;
		console.log(`records returned: ${records}${result.error ? ` (error: ${result.error.message})` : ''}`);
		console.log(`wall time: ${(wallMs / 1000).toFixed(1)} s; least possible: ${(leastMs / 1000).toFixed(0)} s`);
		console.log(
			leastMs > 0
				? `ratio: ${(wallMs / leastMs).toFixed(3)} (target <= 1.10)`
				: 'ratio: n/a (all pages fit in one window; the limiter imposes no wait)',
		);
		console.log(`429 answers: ${rate.rejected429}; most requests in any 60 s window: ${rate.maxInAnyWindow}`);
		const perTenThousand = records > 0 ? ((peakHeap - baselineHeap) / records) * 10_000 : 0;
		console.log(`peak heap growth: ${megabytes(peakHeap - baselineHeap)}; per 10,000 records: ${megabytes(perTenThousand)}`);
	} finally {
		await sandbox.close();
	}
}

main().catch((error) => console.log(`benchmark could not complete: ${(error as Error).message}`));
