/**
 * `npm start -- --queue` as people run it: it comes up with the sandbox, the sandbox's webhooks reach
 * the webhook process, the sample workflows run on the workers, and SIGTERM stops every process it
 * started and removes its temp dir. Only what the guide prints tells the test where things are.
 */
import { spawn } from 'node:child_process';
import { existsSync, promises as fs, readFileSync, readdirSync, readlinkSync } from 'node:fs';

import { REPO_ROOT } from '../../scripts/n8n/agencyInbox';
import { findFreePorts } from '../../scripts/n8n/harness';
import { getJson, waitFor } from '../e2e/support';

/** Processes working in `dir` or naming it on their command line: n8n and its task runners, Postgres, Redis. */
function processesIn(dir: string): string[] {
	return readdirSync('/proc')
		.filter((entry) => /^\d+$/.test(entry))
		.flatMap((pid) => {
			try {
				const commandLine = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
				return readlinkSync(`/proc/${pid}/cwd`).startsWith(dir) || commandLine.includes(dir) ? [`${pid} ${commandLine}`] : [];
			} catch {
				return []; // gone meanwhile
			}
		});
}

it('npm start -- --queue runs the samples on the workers through the webhook process, and SIGTERM leaves nothing behind', async () => {
	const [n8nPort, webhookPort, sandboxPort] = await findFreePorts(3);
	const sandbox = `http://127.0.0.1:${sandboxPort}/_sandbox`;
	const env = { ...process.env, AGENCY_INBOX_N8N_PORT: String(n8nPort), AGENCY_INBOX_N8N_WEBHOOK_PORT: String(webhookPort), AGENCY_INBOX_SANDBOX_PORT: String(sandboxPort) };
	// Its own process group, so a failing test can still stop all of it.
	const child = spawn('npm', ['start', '--silent', '--', '--queue'], { cwd: REPO_ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
	let output = '';
	child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
	child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
	let workDir: string | undefined;
	const everythingGone = () => waitFor(`no process and no folder left in ${workDir}`, async () => ({ processes: processesIn(workDir!), folder: existsSync(workDir!) }), (left) => left.processes.length === 0 && !left.folder, 60_000);
	let passed = false;
	try {
		await waitFor('the guide', async () => output, (text) => text.includes('Press Ctrl-C') || child.exitCode !== null, 10 * 60_000);
		expect(output).toContain('Press Ctrl-C');
		workDir = /Everything is in (\S+), removed on stop/.exec(output)![1];
		const workerLogs = [...output.matchAll(/log: (\S+worker-\d\.log)/g)].map((match) => match[1]);
		expect(workerLogs).toHaveLength(2);

		const endpoints = (await getJson<{ data: Array<{ url: string }> }>(`${sandbox}/webhook-endpoints`)).data;
		expect(endpoints.length).toBeGreaterThan(0);
		for (const endpoint of endpoints) expect(endpoint.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${webhookPort}/webhook/`));
		await waitFor('a delivery the webhook process accepted', () => getJson<{ data: Array<{ status?: number }> }>(`${sandbox}/deliveries`), (answer) => answer.data.some((delivery) => delivery.status === 200), 120_000);
		const workerRuns = () => Promise.all(workerLogs.map((file) => fs.readFile(file, 'utf8').then((text) => text.includes('Worker started execution'))));
		await waitFor('a run on a worker', workerRuns, (ran) => ran.includes(true), 120_000);

		// As a supervisor would: npm itself gets the SIGTERM (and passes it only to its shell).
		process.kill(child.pid!, 'SIGTERM');
		await waitFor('the stop', async () => output, (text) => text.includes('[start] stopped'), 120_000);
		await everythingGone();
		passed = true;
	} finally {
		if (!passed) {
			process.stderr.write(`npm start -- --queue printed:\n${output}\n`);
			try {
				process.kill(-child.pid!, 'SIGTERM');
			} catch {
				// the group is gone already
			}
			if (workDir) await everythingGone();
		}
	}
}, 15 * 60_000);
