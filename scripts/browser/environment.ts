/**
 * The n8n a browser drives: the one of `npm start` when it runs (port 5678, sandbox on 5680), else
 * a throwaway one set up as `npm start` sets it up (the package, the sandbox's credential, the
 * sample workflows), in a temp folder removed afterwards, even after a failure.
 */
import path from 'node:path';
import { startSandbox, type Sandbox } from '../../sandbox';
import { buildPackage, installIntoN8n, loadSampleWorkflows, sandboxCredential, SAMPLE_SANDBOX_ORIGIN } from '../n8n/agencyInbox';
import { DEMO_OWNER, ensureN8n, startN8n, type RunningN8n } from '../n8n/harness';
import { SELECTED_N8N_VERSION } from '../n8n/install';
import { makeTempDir, removeTempDir } from '../tempDirs';

export interface EditorEnvironment {
	n8nUrl: string;
	owner: typeof DEMO_OWNER;
	/** The sandbox's origin, API key and signing secret (the credential's values). */
	sandbox: Pick<Sandbox, 'origin' | 'url' | 'apiKey' | 'signingSecret'>;
	/** Whether this is the n8n of a running `npm start` (then nothing is stopped afterwards). */
	shared: boolean;
	timings: Record<string, number>;
	stop(): Promise<void>;
}

const NPM_START_N8N = `http://127.0.0.1:${process.env.AGENCY_INBOX_N8N_PORT || 5678}`;

async function answers(url: string): Promise<boolean> {
	return fetch(url, { signal: AbortSignal.timeout(2_000) }).then((response) => response.ok, () => false);
}

/** The sandbox `npm start` runs exposes its signing secret nowhere, but it is derived from the default seed. */
async function npmStartEnvironment(): Promise<EditorEnvironment | undefined> {
	if (!(await answers(`${NPM_START_N8N}/healthz`)) || !(await answers(`${SAMPLE_SANDBOX_ORIGIN}/_sandbox/deliveries`))) return undefined;
	// A sandbox started with the default seed has the same key and secret as any other.
	const twin = await startSandbox({ requestsPerMinute: 0 });
	await twin.close();
	return {
		n8nUrl: NPM_START_N8N,
		owner: DEMO_OWNER,
		sandbox: { origin: SAMPLE_SANDBOX_ORIGIN, url: `${SAMPLE_SANDBOX_ORIGIN}/service`, apiKey: twin.apiKey, signingSecret: twin.signingSecret },
		shared: true,
		timings: {},
		stop: async () => undefined,
	};
}

export interface EditorEnvironmentOptions {
	/** Use the n8n of a running `npm start` when there is one (screenshots); tests always start their own. */
	reuseNpmStart?: boolean;
	log?: (line: string) => void;
}

export async function startEditorEnvironment(options: EditorEnvironmentOptions = {}): Promise<EditorEnvironment> {
	const log = options.log ?? (() => undefined);
	if (options.reuseNpmStart) {
		const running = await npmStartEnvironment();
		if (running) {
			log(`using the n8n of npm start at ${running.n8nUrl}`);
			return running;
		}
	}
	const timings: Record<string, number> = {};
	const startedAt = Date.now();
	const [buildMs] = await Promise.all([buildPackage(log), ensureN8n(SELECTED_N8N_VERSION, log)]);
	timings['build'] = buildMs;
	const workDir = makeTempDir('browser');
	let sandbox: Sandbox | undefined;
	let n8n: RunningN8n | undefined;
	const stop = async () => {
		await n8n?.stop().catch(() => undefined);
		await sandbox?.close();
		removeTempDir(workDir);
	};
	try {
		sandbox = await startSandbox({ requestsPerMinute: 0 });
		const userFolder = path.join(workDir, 'user');
		const workflows = await loadSampleWorkflows({ sandboxOrigin: sandbox.origin });
		let stepAt = Date.now();
		log('installing the package, importing the credential and the sample workflows');
		await installIntoN8n({ userFolder, n8nVersion: SELECTED_N8N_VERSION, credentials: [sandboxCredential(sandbox, 600)], workflows, publish: [] });
		timings['install and import'] = Date.now() - stepAt;
		stepAt = Date.now();
		log('starting n8n');
		n8n = await startN8n({ userFolder, env: { GENERIC_TIMEZONE: 'UTC' } });
		timings['n8n start'] = Date.now() - stepAt;
		timings['environment total'] = Date.now() - startedAt;
		log(`n8n at ${n8n.url}`);
		return { n8nUrl: n8n.url, owner: n8n.owner, sandbox, shared: false, timings, stop };
	} catch (error) {
		await stop();
		throw error;
	}
}
