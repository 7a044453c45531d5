/**
 * `npm start` as a newcomer runs it: a first start of the demo's n8n user folder, then a later
 * start of the same folder. Each time the simulator's first changes after "Ready" run every sample
 * workflow, each client message gets one reply (one reply sample published), and a stop leaves no
 * process behind. The cache folder is a throwaway one that links the installed n8n, so the demo's
 * user folder is new without installing n8n again; HOME is a throwaway folder too, compared at the
 * end with what it held before (a real user's ~/.n8n is their own n8n).
 */
import { copyFileSync, existsSync, readdirSync, statSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { ensureN8n, findFreePorts } from '../../scripts/n8n/harness';
import { SELECTED_N8N_VERSION, captureOutput, n8nInstallDir, readInstallation, runN8nCheck, runtimeEnv } from '../../scripts/n8n/install';
import { makeTempDir, removeTempDir } from '../../scripts/tempDirs';
import { expectFirstChangesToRunEverySample, expectOneReplyPerClientMessage, processesIn, startNpmStart, type FirstRuns, type NpmStart } from './npmStart';
import { waitFor } from './support';

const n8nVersion = SELECTED_N8N_VERSION;

/** Every file and folder under `dir` with its size, but npm's own cache and logs (`.npm`, written by every npm command). */
function listHome(dir: string, relative = ''): string[] {
	return readdirSync(path.join(dir, relative)).flatMap((name) => {
		const entry = path.join(relative, name);
		if (entry === '.npm') return [];
		const stats = statSync(path.join(dir, entry));
		return stats.isDirectory() ? [`${entry}/`, ...listHome(dir, entry)] : [`${entry} ${stats.size}`];
	});
}

describe('npm start', () => {
	let cacheRoot: string;
	let home: string;
	let homeBefore: string[];
	let env: NodeJS.ProcessEnv;
	let sandboxPort: number;
	let running: NpmStart | undefined;
	const measured: Record<string, FirstRuns> = {};

	beforeAll(async () => {
		// In CI the earlier steps installed n8n; otherwise this installs it (minutes).
		await ensureN8n(n8nVersion, (line) => process.stderr.write(`${line}\n`));
		cacheRoot = makeTempDir('npm-start');
		symlinkSync(n8nInstallDir(n8nVersion), path.join(cacheRoot, path.basename(n8nInstallDir(n8nVersion))));
		// A new user's home, with npm's settings of this machine's user (registry, proxy, CA).
		home = makeTempDir('npm-start-home');
		if (existsSync(path.join(os.homedir(), '.npmrc'))) copyFileSync(path.join(os.homedir(), '.npmrc'), path.join(home, '.npmrc'));
		homeBefore = listHome(home);
		const [n8nPort, webhookPort, freePort] = await findFreePorts(3);
		sandboxPort = freePort;
		env = {
			...process.env,
			HOME: home,
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
	});

	afterAll(() => {
		if (cacheRoot) removeTempDir(cacheRoot);
		if (home) removeTempDir(home);
		process.stderr.write(`npm start, seconds from "Ready" to each sample's first run: ${JSON.stringify(measured)}\n`);
	});

	async function startRunAndStop(start: 'first start' | 'second start', stop: 'SIGTERM to npm' | 'Ctrl-C'): Promise<string> {
		running = await startNpmStart([], env, sandboxPort);
		const [firstRuns, clientMessages] = await Promise.all([expectFirstChangesToRunEverySample(running), expectOneReplyPerClientMessage(running)]);
		measured[start] = firstRuns;
		process.stderr.write(`npm start, ${start}: ${clientMessages} client message(s) in the first 70 s, one reply each\n`);
		const { output } = running;
		await running.stop(stop);
		running = undefined;
		await waitFor(`no process left in ${cacheRoot}`, async () => processesIn(cacheRoot), (left) => left.length === 0);
		return output();
	}

	it('on a first start, runs every sample on the simulator\'s first changes after "Ready", one reply per client message (the polling reply imported, not published); SIGTERM stops everything', async () => {
		const output = await startRunAndStop('first start', 'SIGTERM to npm');
		expect(output).toContain('importing 1 credential(s)');
		const imported = output.slice(output.indexOf('Imported, not published:'));
		expect(imported).toContain('auto-reply to client chat messages (polling)');
		expect(output).toContain('click Unpublish');
	}, 15 * 60_000);

	it('on a later start of the same n8n, does the same; Ctrl-C stops everything', async () => {
		const output = await startRunAndStop('second start', 'Ctrl-C');
		expect(output).toContain('not imported again');
	}, 15 * 60_000);

	it('leaves the home folder as it was: no ~/.n8n, nothing else but npm\'s own cache and logs', () => {
		expect(listHome(home)).toEqual(homeBefore);
	});

	// Three n8n CLI starts: seconds each on a calm machine, minutes on a busy one.
	it('installs n8n without a ~/.n8n: the installer\'s checks of n8n (--help, --version) keep to a throwaway user folder, where n8n\'s CLI alone makes ~/.n8n', async () => {
		const installation = readInstallation(n8nVersion)!;
		const homes = { checked: makeTempDir('install-check-home'), plain: makeTempDir('plain-cli-home') };
		try {
			const envWithHome = (dir: string) => {
				const withHome: NodeJS.ProcessEnv = { ...runtimeEnv(installation), HOME: dir };
				delete withHome.N8N_USER_FOLDER;
				return withHome;
			};
			await runN8nCheck(installation, ['--help'], envWithHome(homes.checked));
			expect(await runN8nCheck(installation, ['--version'], envWithHome(homes.checked))).toContain(n8nVersion);
			await captureOutput(installation.nodeBinary, [installation.n8nBin, '--help'], installation.installDir, envWithHome(homes.plain));
			expect({ checked: existsSync(path.join(homes.checked, '.n8n')), plain: existsSync(path.join(homes.plain, '.n8n')) }).toEqual({ checked: false, plain: true });
		} finally {
			for (const dir of Object.values(homes)) removeTempDir(dir);
		}
	});
});
