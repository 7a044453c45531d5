/**
 * `npm start -- --queue` as people run it: it comes up with the sandbox, the simulator's first changes
 * after "Ready" run every sample workflow on the workers through the webhook process, and SIGTERM
 * stops every process it started and removes its temp dir. Only what the guide prints tells the test
 * where things are.
 */
import { existsSync, promises as fs } from 'node:fs';

import { findFreePorts } from '../../scripts/n8n/harness';
import { expectFirstChangesToRunEverySample, processesIn, startNpmStart, type NpmStart } from '../e2e/npmStart';
import { getJson, waitFor } from '../e2e/support';

it('npm start -- --queue runs every sample on the simulator\'s first changes, on the workers through the webhook process, and SIGTERM leaves nothing behind', async () => {
	const [n8nPort, webhookPort, sandboxPort] = await findFreePorts(3);
	const env = { ...process.env, AGENCY_INBOX_N8N_PORT: String(n8nPort), AGENCY_INBOX_N8N_WEBHOOK_PORT: String(webhookPort), AGENCY_INBOX_SANDBOX_PORT: String(sandboxPort) };
	let running: NpmStart | undefined;
	let workDir: string | undefined;
	const everythingGone = () => waitFor(`no process and no folder left in ${workDir}`, async () => ({ processes: processesIn(workDir!), folder: existsSync(workDir!) }), (left) => left.processes.length === 0 && !left.folder);
	try {
		running = await startNpmStart(['--queue'], env, sandboxPort);
		const output = running.output();
		workDir = /Everything is in (\S+), removed on stop/.exec(output)![1];
		const workerLogs = [...output.matchAll(/log: (\S+worker-\d\.log)/g)].map((match) => match[1]);
		expect(workerLogs).toHaveLength(2);

		const endpoints = (await getJson<{ data: Array<{ url: string }> }>(`${running.sandboxControl}/webhook-endpoints`)).data;
		expect(endpoints.length).toBeGreaterThan(0);
		for (const endpoint of endpoints) expect(endpoint.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${webhookPort}/webhook/`));
		const firstRuns = await expectFirstChangesToRunEverySample(running);
		process.stderr.write(`npm start -- --queue, seconds from "Ready" to each sample's first run: ${JSON.stringify(firstRuns)}\n`);
		const workerRuns = await Promise.all(workerLogs.map((file) => fs.readFile(file, 'utf8').then((text) => text.includes('Worker started execution'))));
		expect(workerRuns).toContain(true);

		await running.stop('SIGTERM to npm');
		running = undefined;
		await everythingGone();
	} finally {
		if (running) {
			await running.abandon();
			if (workDir) await everythingGone();
		}
	}
}, 15 * 60_000);
