/**
 * `npm start` as a newcomer runs it: a first start of the demo's n8n user folder, then a later
 * start of the same folder. Each time the simulator's first changes after "Ready" run every sample
 * workflow, and a stop leaves no process behind. The cache folder is a throwaway one that links the
 * installed n8n, so the demo's user folder is new without installing n8n again.
 */
import { symlinkSync } from 'node:fs';
import path from 'node:path';

import { ensureN8n, findFreePorts } from '../../scripts/n8n/harness';
import { SELECTED_N8N_VERSION, n8nInstallDir } from '../../scripts/n8n/install';
import { makeTempDir, removeTempDir } from '../../scripts/tempDirs';
import { expectFirstChangesToRunEverySample, processesIn, startNpmStart, type FirstRuns, type NpmStart } from './npmStart';
import { waitFor } from './support';

const n8nVersion = SELECTED_N8N_VERSION;

describe('npm start', () => {
	let cacheRoot: string;
	let env: NodeJS.ProcessEnv;
	let sandboxPort: number;
	let running: NpmStart | undefined;
	const measured: Record<string, FirstRuns> = {};

	beforeAll(async () => {
		// In CI the earlier steps installed n8n; otherwise this installs it (minutes).
		await ensureN8n(n8nVersion, (line) => process.stderr.write(`${line}\n`));
		cacheRoot = makeTempDir('npm-start');
		symlinkSync(n8nInstallDir(n8nVersion), path.join(cacheRoot, path.basename(n8nInstallDir(n8nVersion))));
		const [n8nPort, webhookPort, freePort] = await findFreePorts(3);
		sandboxPort = freePort;
		env = {
			...process.env,
			AGENCY_INBOX_N8N_CACHE: cacheRoot,
			AGENCY_INBOX_N8N_PORT: String(n8nPort),
			AGENCY_INBOX_N8N_WEBHOOK_PORT: String(webhookPort),
			AGENCY_INBOX_SANDBOX_PORT: String(sandboxPort),
		};
		// As a newcomer: one n8n, no AI sample.
		delete env.AGENCY_INBOX_QUEUE;
		delete env.AGENCY_INBOX_OPENAI_API_KEY;
	}, 30 * 60_000);

	afterEach(async () => {
		await running?.abandon();
		running = undefined;
	}, 120_000);

	afterAll(() => {
		if (cacheRoot) removeTempDir(cacheRoot);
		process.stderr.write(`npm start, seconds from "Ready" to each sample's first run: ${JSON.stringify(measured)}\n`);
	});

	async function startRunAndStop(start: 'first start' | 'second start', stop: 'SIGTERM to npm' | 'Ctrl-C'): Promise<string> {
		running = await startNpmStart([], env, sandboxPort);
		measured[start] = await expectFirstChangesToRunEverySample(running);
		const { output } = running;
		await running.stop(stop);
		running = undefined;
		await waitFor(`no process left in ${cacheRoot}`, async () => processesIn(cacheRoot), (left) => left.length === 0, 30_000);
		return output();
	}

	it('on a first start, runs every sample on the simulator\'s first changes after "Ready"; SIGTERM stops everything', async () => {
		const output = await startRunAndStop('first start', 'SIGTERM to npm');
		expect(output).toContain('importing 1 credential(s)');
	}, 15 * 60_000);

	it('on a later start of the same n8n, does the same; Ctrl-C stops everything', async () => {
		const output = await startRunAndStop('second start', 'Ctrl-C');
		expect(output).toContain('not imported again');
	}, 15 * 60_000);
});
