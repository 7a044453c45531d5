/**
 * n8n's CPU for our polling triggers, in one real n8n per setting, side by side: six triggers (two each
 * of Message, Invitation and Proposal) polling every 3 s against the sandbox for 90 s, with n8n's
 * default expression isolates (a fresh isolate for every poll and every credential decryption) and
 * with N8N_EXPRESSION_ENGINE_LAZY_ACQUIRE=true (one only where an expression is evaluated, as the test
 * suites run n8n). CPU seconds of the n8n process from /proc, which do not depend on the machine's
 * other load; also the CPU of publishing the six. Prints; never fails.
 */
import path from 'node:path';

import { startSandbox } from '../sandbox';
import { NODE_TYPES, installIntoN8n, sandboxCredential } from '../scripts/n8n/agencyInbox';
import { N8N_DEFAULT_EXPRESSION_ISOLATES, setPublished, startN8n } from '../scripts/n8n/harness';
import { makeTempDir, removeTempDir } from '../scripts/tempDirs';
import { crmPollingWorkflow } from '../test/e2e/pollingN8n';
import { sleep } from '../test/e2e/support';
import { cpuMsOf } from './support/n8nRuns';

const POLLING_MS = 90_000;
const SETTINGS = { 'n8n default (an isolate per poll and per decryption)': N8N_DEFAULT_EXPRESSION_ISOLATES, 'lazy isolates (the test suites)': { N8N_EXPRESSION_ENGINE_LAZY_ACQUIRE: 'true' } };

const cpuSecondsOf = (pid: number) => cpuMsOf(pid) / 1000;

async function measure(label: string, env: Record<string, string>): Promise<string> {
	const sandbox = await startSandbox({ requestsPerMinute: 0, pageSize: 10, maxPageSize: 10 });
	const workDir = makeTempDir('bench-poll-cpu');
	try {
		const userFolder = path.join(workDir, 'n8n');
		const types = [NODE_TYPES.messageTrigger, NODE_TYPES.invitationTrigger, NODE_TYPES.proposalTrigger];
		const workflows = types.flatMap((type, index) =>
			[0, 1].map((copy) => crmPollingWorkflow({ id: `benchPollCpu${index}${copy}`, name: `${type} ${copy}`, trigger: { name: 'Trigger', type, parameters: {} }, row: '$json', sandboxOrigin: sandbox.origin })),
		);
		await installIntoN8n({ userFolder, credentials: [sandboxCredential(sandbox, 10_000)], workflows, publish: [] });
		const n8n = await startN8n({ userFolder, env: { GENERIC_TIMEZONE: 'UTC', ...env } });
		try {
			let from = cpuSecondsOf(n8n.pid);
			for (const workflow of workflows) await setPublished(n8n, workflow.id, true);
			const publishCpu = cpuSecondsOf(n8n.pid) - from;
			from = cpuSecondsOf(n8n.pid);
			const requestsFrom = await requestCount(sandbox.origin);
			await sleep(POLLING_MS);
			const pollCpu = cpuSecondsOf(n8n.pid) - from;
			const requests = (await requestCount(sandbox.origin)) - requestsFrom;
			return `${label}: publishing 6: ${publishCpu.toFixed(1)} CPU s; polling ${POLLING_MS / 1000} s: ${pollCpu.toFixed(1)} CPU s for ${requests} requests (${((pollCpu / requests) * 1000).toFixed(0)} ms a request)`;
		} finally {
			await n8n.stop();
		}
	} finally {
		await sandbox.close();
		removeTempDir(workDir);
	}
}

async function requestCount(origin: string): Promise<number> {
	return ((await (await fetch(`${origin}/_sandbox/requests`)).json()) as { data: unknown[] }).data.length;
}

(async () => {
	// Side by side, so both see the same machine.
	const lines = await Promise.all(Object.entries(SETTINGS).map(([label, env]) => measure(label, env)));
	for (const line of lines) console.log(line);
})().catch((error) => {
	console.error(error);
	process.exitCode = 1;
});
