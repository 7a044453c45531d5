/**
 * Runs a pinned real n8n with a package of ours installed the way n8n installs community packages.
 * Used by `npm start` (people) and the end-to-end tests (jest, headless).
 *
 * A user folder is bound to one n8n version and one encryption key when it is prepared, so every
 * later command (import, publish, execute, start) runs the same n8n against the same database.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, promises as fs } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_N8N_VERSION, captureOutput, installN8n, n8nMajorVersion, runtimeEnv, withoutNpmVariables } from './install';

/** The owner account created on first start, so people can log in to the editor. */
export const DEMO_OWNER = {
	email: 'demo@agency-inbox.test',
	password: 'AgencyInbox-demo-1',
	firstName: 'Demo',
	lastName: 'Owner',
} as const;

export interface N8nRuntime {
	version: string;
	nodeBinary: string;
	n8nBin: string;
	/** Environment with Node 24 first on PATH and nothing npm exported. */
	env: NodeJS.ProcessEnv;
}

/** Installs n8n `version` on first use (minutes, with progress) and returns how to run it. */
export async function ensureN8n(version = DEFAULT_N8N_VERSION, log?: (line: string) => void): Promise<N8nRuntime> {
	const installation = await installN8n(version, log);
	return {
		version,
		nodeBinary: installation.nodeBinary,
		n8nBin: installation.n8nBin,
		env: runtimeEnv(installation),
	};
}

/** What a prepared user folder is bound to; kept beside n8n's own `.n8n` folder. */
interface UserFolderSettings {
	n8nVersion: string;
	encryptionKey: string;
	/** Variables every n8n process of the folder gets, CLI commands included: its database (e.g. Postgres). */
	env?: Record<string, string>;
	/** Workflows the folder's next `n8n start` publishes once it serves (publishWorkflows, n8n 2.x). */
	publishAtStart?: string[];
	/** Imports waiting for the first n8n of a folder no n8n has used yet (importCredentials, n8n 2.x). */
	importAtStart?: Imports;
	/** Credentials created over REST: the id n8n gave each, by the id it was imported with. */
	credentialIds?: Record<string, string>;
	/** Some n8n command or start has used the folder's database: imports go through the CLI at once. */
	databaseInUse?: boolean;
}

const SETTINGS_FILE = 'n8n-harness.json';

async function readUserFolderSettings(userFolder: string): Promise<UserFolderSettings> {
	const file = path.join(userFolder, SETTINGS_FILE);
	if (!existsSync(file)) throw new Error(`${userFolder} was not prepared: call prepareUserFolder() first`);
	return JSON.parse(await fs.readFile(file, 'utf8'));
}

async function writeUserFolderSettings(userFolder: string, settings: UserFolderSettings): Promise<void> {
	await fs.writeFile(path.join(userFolder, SETTINGS_FILE), JSON.stringify(settings, null, '\t') + '\n');
}

export interface PrepareUserFolderOptions {
	userFolder: string;
	/** A folder with a built package (package.json with an `n8n` section, `files` listing dist). */
	packageDir: string;
	n8nVersion?: string;
	/** Bound to the folder on first call with its version: variables of every process, e.g. DB_TYPE=postgresdb and DB_POSTGRESDB_*. */
	env?: Record<string, string>;
}

export interface PreparedPackage {
	name: string;
	version: string;
	/** Where n8n loads it from: `<userFolder>/.n8n/nodes/node_modules/<name>`. */
	installedDir: string;
}

/**
 * Binds a user folder to an n8n version and encryption key (and variables) on first call, with no
 * package in it: for installing one the way users do, from n8n's Community Nodes screen.
 */
export async function bindUserFolder(options: Omit<PrepareUserFolderOptions, 'packageDir'>): Promise<void> {
	const userFolder = path.resolve(options.userFolder);
	await fs.mkdir(path.join(userFolder, '.n8n'), { recursive: true });
	if (existsSync(path.join(userFolder, SETTINGS_FILE))) return;
	await writeUserFolderSettings(userFolder, {
		n8nVersion: options.n8nVersion ?? DEFAULT_N8N_VERSION,
		encryptionKey: randomBytes(24).toString('base64url'),
		...(options.env && { env: options.env }),
	});
}

/**
 * Installs the `npm pack` of packageDir into the user folder as n8n installs community packages,
 * replacing an earlier copy; binds the folder to an n8n version and encryption key on first call.
 */
export async function prepareUserFolder(options: PrepareUserFolderOptions): Promise<PreparedPackage> {
	const userFolder = path.resolve(options.userFolder);
	await bindUserFolder(options);

	const packDir = await fs.mkdtemp(path.join(os.tmpdir(), 'n8n-harness-pack-'));
	try {
		const packageDir = path.resolve(options.packageDir);
		// Scripts off: packing must not build; the caller builds first.
		const packJson = await captureOutput(
			'npm',
			['pack', packageDir, '--json', '--ignore-scripts=true', `--pack-destination=${packDir}`],
			packDir,
			withoutNpmVariables(process.env),
		);
		const [{ name, version, filename }] = JSON.parse(packJson) as Array<{ name: string; version: string; filename: string }>;

		const nodesDir = path.join(userFolder, '.n8n', 'nodes');
		const installedDir = path.join(nodesDir, 'node_modules', name);
		await fs.rm(installedDir, { recursive: true, force: true });
		await fs.mkdir(installedDir, { recursive: true });
		// An npm tarball holds everything under `package/`.
		await captureOutput('tar', ['-xzf', path.join(packDir, filename), '-C', installedDir, '--strip-components=1'], packDir, process.env);

		const nodesPackageJsonFile = path.join(nodesDir, 'package.json');
		const nodesPackageJson = existsSync(nodesPackageJsonFile)
			? JSON.parse(await fs.readFile(nodesPackageJsonFile, 'utf8'))
			: { name: 'installed-nodes', private: true, dependencies: {} };
		nodesPackageJson.dependencies = { ...nodesPackageJson.dependencies, [name]: version };
		await fs.writeFile(nodesPackageJsonFile, JSON.stringify(nodesPackageJson, null, 2));
		return { name, version, installedDir };
	} finally {
		await fs.rm(packDir, { recursive: true, force: true });
	}
}

/** The only variables taken from the caller, so a developer's own N8N_* and DB_* settings cannot leak in. */
const INHERITED_VARIABLES = ['PATH', 'HOME', 'TMPDIR', 'LANG', 'LC_ALL', 'TZ'];

/**
 * The environment of every n8n process of a user folder: isolated from the caller's N8N_* and DB_*,
 * offline (no telemetry, banners, templates or version checks), with its own task broker port.
 */
async function n8nEnv(runtime: N8nRuntime, userFolder: string, extra: NodeJS.ProcessEnv = {}): Promise<NodeJS.ProcessEnv> {
	const { encryptionKey, env: folderEnv } = await readUserFolderSettings(userFolder);
	const inherited = Object.fromEntries(INHERITED_VARIABLES.filter((name) => runtime.env[name]).map((name) => [name, runtime.env[name]]));
	const [brokerPort] = await findFreePorts(1);
	return {
		...inherited,
		N8N_USER_FOLDER: userFolder,
		N8N_ENCRYPTION_KEY: encryptionKey,
		N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS: 'true',
		DB_TYPE: 'sqlite',
		// Two n8n processes (a test run and `npm start`, or two CLI commands) would clash on 5679.
		N8N_RUNNERS_BROKER_PORT: String(brokerPort),
		N8N_RUNNERS_BROKER_LISTEN_ADDRESS: '127.0.0.1',
		N8N_DIAGNOSTICS_ENABLED: 'false',
		N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
		N8N_VERSION_NOTIFICATIONS_WHATS_NEW_ENABLED: 'false',
		N8N_TEMPLATES_ENABLED: 'false',
		N8N_PERSONALIZATION_ENABLED: 'false',
		N8N_HIRING_BANNER_ENABLED: 'false',
		N8N_DYNAMIC_BANNERS_ENABLED: 'false',
		N8N_VERIFIED_PACKAGES_ENABLED: 'false',
		N8N_LICENSE_AUTO_RENEW_ENABLED: 'false',
		N8N_AI_ENABLED: 'false',
		// A package listed in nodes/package.json but missing must not trigger an npm install.
		N8N_REINSTALL_MISSING_PACKAGES: 'false',
		N8N_COMMUNITY_PACKAGES_ENABLED: 'true',
		// n8n 2.41 fails a publication whose activation (a polling trigger's first poll included) takes
		// more than 70% of this lease (120 s by default): on a machine running four suites at once that
		// happens to a trigger whose first poll waits for a busy n8n; 10 minutes here.
		N8N_WORKFLOW_PUBLICATION_OUTBOX_LEASE_SECONDS: '600',
		// n8n 2.x takes a fresh expression isolate for every poll and every credential it decrypts (most
		// of n8n's CPU in the polling tests); n8n's own setting takes one only where an expression is
		// evaluated (docs/development.md, "n8n's expression isolates"). N8N_DEFAULT_EXPRESSION_ISOLATES
		// undoes it, and so does the weekly soak (AGENCY_INBOX_SOAK=1): it runs n8n's defaults throughout.
		N8N_EXPRESSION_ENGINE_LAZY_ACQUIRE: process.env.AGENCY_INBOX_SOAK === '1' ? 'false' : 'true',
		...folderEnv,
		...extra,
	};
}

/**
 * n8n without its editor (N8N_DISABLE_UI), for tests that never open it: each start of a main then
 * skips copying the editor's 29 MB of scripts into its static cache, about a quarter of the start's CPU
 * (4.6 of 17 to 20 s measured on 2.41.1). The REST API and webhooks stay; the editor's node lists
 * (`/types/*.json`) go, so a test that reads them keeps the editor.
 */
export const N8N_WITHOUT_EDITOR = { N8N_DISABLE_UI: 'true' };

/** n8n's default: an expression isolate for every poll, execution and credential decryption, as users run it. */
export const N8N_DEFAULT_EXPRESSION_ISOLATES = { N8N_EXPRESSION_ENGINE_LAZY_ACQUIRE: 'false' };

async function runtimeFor(userFolder: string): Promise<N8nRuntime> {
	return ensureN8n((await readUserFolderSettings(userFolder)).n8nVersion);
}

/** The runtime for an n8n CLI command, once the imports waiting for the folder's first n8n are in. */
async function cliRuntimeFor(userFolder: string): Promise<N8nRuntime> {
	await importWaitingWithCli(userFolder);
	return runtimeFor(userFolder);
}

/** Runs one n8n CLI command against the user folder; rejects with its output when it fails. */
async function runN8nCommand(userFolder: string, args: string[]): Promise<string> {
	const runtime = await cliRuntimeFor(userFolder);
	const env = await n8nEnv(runtime, userFolder);
	return captureOutput(runtime.nodeBinary, [runtime.n8nBin, ...args], userFolder, env);
}

/** Runs an n8n import command on a temporary JSON file holding `entries`. */
async function importJson(userFolder: string, command: string, entries: object[]): Promise<void> {
	const inputDir = await fs.mkdtemp(path.join(os.tmpdir(), 'n8n-harness-import-'));
	try {
		const inputFile = path.join(inputDir, 'input.json');
		await fs.writeFile(inputFile, JSON.stringify(entries));
		await runN8nCommand(userFolder, [command, `--input=${inputFile}`]);
	} finally {
		await fs.rm(inputDir, { recursive: true, force: true });
	}
}

export interface CredentialToImport {
	id: string;
	name: string;
	type: string;
	/** Plain values; n8n encrypts them with the user folder's key on import. */
	data: Record<string, unknown>;
}

/**
 * Imports credentials. On n8n 2.x into a folder no n8n has used yet they wait for its first n8n: a
 * start creates them over REST once it serves (no CLI boot: 6 to 9 CPU seconds each on 2.41.1, the
 * first with the migrations), any other command imports them with the CLI first. Else
 * `n8n import:credentials` at once.
 */
export async function importCredentials(userFolder: string, credentials: CredentialToImport[]): Promise<ImportPath> {
	return await importOrWait(userFolder, { credentials, workflows: [] });
}

export interface WorkflowToImport {
	id: string;
	name: string;
	nodes: object[];
	connections: object;
	settings?: object;
	[property: string]: unknown;
}

/** Imports workflows (inactive, keeping their ids), as importCredentials imports credentials. */
export async function importWorkflows(userFolder: string, workflows: WorkflowToImport[]): Promise<ImportPath> {
	return await importOrWait(userFolder, { credentials: [], workflows: workflows.map((workflow) => ({ active: false, settings: {}, ...workflow })) });
}

interface Imports {
	credentials: CredentialToImport[];
	workflows: WorkflowToImport[];
}

/** How an import went in: at once through n8n's CLI, or waiting for the folder's first n8n, which creates it over REST. */
export type ImportPath = 'with the n8n CLI now' | 'over REST once n8n has started';

/** Through the CLI where the folder's database is in use or n8n is 1.x; else left for the folder's first n8n. */
async function importOrWait(userFolder: string, imports: Imports): Promise<ImportPath> {
	const settings = await readUserFolderSettings(userFolder);
	if (settings.databaseInUse || n8nMajorVersion(settings.n8nVersion) < 2) {
		await importWithCli(userFolder, imports, settings.credentialIds ?? {});
		return 'with the n8n CLI now';
	}
	const waiting = settings.importAtStart ?? { credentials: [], workflows: [] };
	await writeUserFolderSettings(userFolder, {
		...settings,
		importAtStart: { credentials: [...waiting.credentials, ...imports.credentials], workflows: [...waiting.workflows, ...imports.workflows] },
	});
	return 'over REST once n8n has started';
}

/** Takes the imports waiting for the folder's first n8n, marking its database used. */
async function takeWaitingImports(userFolder: string): Promise<{ imports?: Imports; credentialIds: Record<string, string> }> {
	const { importAtStart: imports, ...settings } = await readUserFolderSettings(userFolder);
	if (!settings.databaseInUse || imports) await writeUserFolderSettings(userFolder, { ...settings, databaseInUse: true });
	return { imports, credentialIds: settings.credentialIds ?? {} };
}

async function importWaitingWithCli(userFolder: string): Promise<void> {
	const { imports, credentialIds } = await takeWaitingImports(userFolder);
	if (imports) await importWithCli(userFolder, imports, credentialIds);
}

async function importWithCli(userFolder: string, imports: Imports, credentialIds: Record<string, string>): Promise<void> {
	const credentials = imports.credentials.map((credential) => ({ ...credential, id: credentialIds[credential.id] ?? credential.id }));
	if (credentials.length) await importJson(userFolder, 'import:credentials', credentials);
	if (imports.workflows.length) await importJson(userFolder, 'import:workflow', imports.workflows.map((workflow) => withCredentialIds(workflow, credentialIds)));
}

/**
 * A started n8n creates what waited for it, as the editor does: credentials (n8n gives the ids), then
 * workflows (with theirs). Each one created leaves the waiting imports at once, and they are cleared only
 * when all are created: a start that fails in the middle leaves the rest to the next start, nothing twice.
 */
async function importWaitingOverRest(userFolder: string, url: string, headers: Record<string, string>): Promise<void> {
	const settings = await readUserFolderSettings(userFolder);
	const waiting = settings.importAtStart ?? { credentials: [], workflows: [] };
	const credentialIds = { ...settings.credentialIds };
	/** Writes what is still waiting (nothing once `done`), with the database marked used. */
	const save = async (done = false) => {
		const { importAtStart: _, ...rest } = await readUserFolderSettings(userFolder);
		await writeUserFolderSettings(userFolder, { ...rest, credentialIds, databaseInUse: true, ...(done ? {} : { importAtStart: waiting }) });
	};
	const created = async (route: string, body: object) => {
		const response = await fetchFromN8n(`${url}/rest/${route}`, { method: 'POST', headers, body: JSON.stringify(body) });
		if (!response.ok) throw new Error(`POST /rest/${route}: ${response.status} ${await response.text()}`);
		return ((await response.json()) as { data: { id: string } }).data.id;
	};
	for (const { id, name, type, data } of [...waiting.credentials]) {
		credentialIds[id] = await created('credentials', { name, type, data });
		waiting.credentials = waiting.credentials.slice(1);
		await save();
	}
	for (const workflow of [...waiting.workflows]) {
		await created('workflows', withCredentialIds(workflow, credentialIds));
		waiting.workflows = waiting.workflows.slice(1);
		await save();
	}
	await save(true);
}

/** The workflow with its nodes' credentials pointing at the ids n8n gave them. */
function withCredentialIds(workflow: WorkflowToImport, credentialIds: Record<string, string>): WorkflowToImport {
	type Node = { credentials?: Record<string, { id?: string }> };
	const nodes = (workflow.nodes as Node[]).map((node) =>
		node.credentials
			? { ...node, credentials: Object.fromEntries(Object.entries(node.credentials).map(([type, ref]) => [type, ref.id && credentialIds[ref.id] ? { ...ref, id: credentialIds[ref.id] } : ref])) }
			: node,
	);
	return { ...workflow, nodes };
}

/**
 * Publishes workflows of a user folder. On n8n 2.x at the folder's next startN8n, once n8n serves, as
 * the editor's Publish button does (setPublished), all in that n8n: a `n8n publish:workflow` each
 * would start n8n's CLI each time, seconds and tens of CPU seconds apiece. On 1.x now, one
 * `n8n update:workflow --active=true` each.
 */
export async function publishWorkflows(userFolder: string, ids: string[]): Promise<'with the n8n CLI now' | 'once n8n has started'> {
	const settings = await readUserFolderSettings(userFolder);
	if (n8nMajorVersion(settings.n8nVersion) < 2) {
		for (const id of ids) await publishWorkflow(userFolder, id);
		return 'with the n8n CLI now';
	}
	await writeUserFolderSettings(userFolder, { ...settings, publishAtStart: [...new Set([...(settings.publishAtStart ?? []), ...ids])] });
	return 'once n8n has started';
}

/** Publishes what publishWorkflows left for this start, once; a workflow its user unpublished later stays so. */
async function publishAtStart(userFolder: string, url: string, headers: Record<string, string>): Promise<void> {
	const { publishAtStart: ids, ...settings } = await readUserFolderSettings(userFolder);
	if (!ids?.length) return;
	for (const id of ids) await setPublishedAt(url, headers, id, true);
	await writeUserFolderSettings(userFolder, settings);
}

/**
 * Publishes (activates) a workflow with `n8n publish:workflow`: live at the next startN8n, or while
 * n8n runs at its next reconcile pass (N8N_WORKFLOW_PUBLICATION_RECONCILE_INTERVAL_SECONDS, 10 s).
 */
export async function publishWorkflow(userFolder: string, id: string): Promise<void> {
	const { n8nVersion } = await readUserFolderSettings(userFolder);
	// n8n 1.x has no publish command; activating the workflow is its equivalent.
	const args = n8nMajorVersion(n8nVersion) < 2 ? ['update:workflow', `--id=${id}`, '--active=true'] : ['publish:workflow', `--id=${id}`];
	await runN8nCommand(userFolder, args);
}

/**
 * Unpublishes a workflow with `n8n unpublish:workflow` (n8n 2.x): in the database at once, and in a
 * running n8n at its next reconcile pass; a way out when the editor's Unpublish did not finish.
 */
export async function unpublishWorkflow(userFolder: string, id: string): Promise<void> {
	await runN8nCommand(userFolder, ['unpublish:workflow', `--id=${id}`]);
}

export interface ExecutionResult {
	succeeded: boolean;
	/** n8n's run data (IRun): `data.resultData.runData[nodeName][0].data.main[0][i].json`, `data.resultData.error`. */
	run: RunJson;
	/** Everything the command printed, for diagnosis. */
	output: string;
}

export interface RunJson {
	data: {
		resultData: {
			error?: { message: string; [property: string]: unknown };
			runData: Record<string, Array<{ data?: { main: Array<Array<{ json: Record<string, unknown> }> | null> } }>>;
		};
	};
	[property: string]: unknown;
}

/**
 * Runs a workflow that starts with a Manual (or Execute Workflow) trigger with `n8n execute` and
 * returns its run data, failed runs included.
 */
export async function executeWorkflow(userFolder: string, id: string): Promise<ExecutionResult> {
	const runtime = await cliRuntimeFor(userFolder);
	// The JSON of a failed run is printed only as an info log line.
	const env = await n8nEnv(runtime, userFolder, { N8N_LOG_LEVEL: 'info' });
	const { exitCode, output } = await runToEnd(runtime.nodeBinary, [runtime.n8nBin, 'execute', `--id=${id}`, '--rawOutput'], userFolder, env);
	const run = extractRunJson(output);
	if (!run) throw new Error(`n8n execute --id=${id} printed no run data (exit code ${exitCode}):\n${output}`);
	return { succeeded: exitCode === 0 && !run.data.resultData.error, run, output };
}

export interface BatchExecutionResult {
	/** The run data of a run that ended without an error; n8n writes none for a failed run. */
	run?: RunJson;
	/** n8n's message for a failed run ("<message> on node <name>"). */
	error?: string;
}

/**
 * Runs several workflows that start with a Manual trigger, one after the other, in one n8n process
 * (`n8n execute-batch`, without its retries, so no write is sent twice) instead of one process
 * each, and returns each workflow's result by id.
 */
export async function executeWorkflows(userFolder: string, ids: string[]): Promise<Map<string, BatchExecutionResult>> {
	const runtime = await cliRuntimeFor(userFolder);
	const env = await n8nEnv(runtime, userFolder);
	const outputDir = await fs.mkdtemp(path.join(os.tmpdir(), 'n8n-harness-batch-'));
	try {
		const summaryFile = path.join(outputDir, 'summary.json');
		const args = [runtime.n8nBin, executeBatchCommand(runtime), `--ids=${ids.join(',')}`, '--retries=0', `--snapshot=${outputDir}`, `--output=${summaryFile}`];
		const { exitCode, output } = await runToEnd(runtime.nodeBinary, args, userFolder, env, summaryFile);
		if (!existsSync(summaryFile)) throw new Error(`n8n ${args[1]} wrote no summary (exit code ${exitCode}):\n${output}`);
		const summary = JSON.parse(await fs.readFile(summaryFile, 'utf8')) as { executions: Array<{ workflowId: string; error?: string }> };
		const results = new Map<string, BatchExecutionResult>();
		for (const id of ids) {
			const snapshotFile = path.join(outputDir, `${id}-snapshot.json`);
			const execution = summary.executions.find((candidate) => candidate.workflowId === id);
			results.set(id, {
				run: existsSync(snapshotFile) ? JSON.parse(await fs.readFile(snapshotFile, 'utf8')) : undefined,
				error: execution?.error ?? (execution ? undefined : 'n8n did not run this workflow'),
			});
		}
		return results;
	} finally {
		await fs.rm(outputDir, { recursive: true, force: true });
	}
}

/** `execute-batch`; older n8n (1.49.0) names the command after its file, `executeBatch`. */
function executeBatchCommand(runtime: N8nRuntime): string {
	const commandsDir = path.join(path.dirname(path.dirname(runtime.n8nBin)), 'dist', 'commands');
	return existsSync(path.join(commandsDir, 'executeBatch.js')) ? 'executeBatch' : 'execute-batch';
}

/** The items a node produced on its first output in a run. */
export function nodeOutputJson(run: RunJson, nodeName: string): Array<Record<string, unknown>> {
	const nodeRuns = run.data.resultData.runData[nodeName];
	if (!nodeRuns) throw new Error(`node "${nodeName}" did not run; ran: ${Object.keys(run.data.resultData.runData).join(', ')}`);
	return (nodeRuns[nodeRuns.length - 1].data?.main[0] ?? []).map((item) => item.json);
}

/** The run is printed as pretty JSON: a line `{` up to the next line `}`, among log lines. */
function extractRunJson(output: string): RunJson | undefined {
	const lines = output.split('\n');
	const start = lines.indexOf('{');
	const end = lines.indexOf('}', start);
	if (start < 0 || end < 0) return undefined;
	return JSON.parse(lines.slice(start, end + 1).join('\n'));
}

/** Runs a command to its end; one that writes `lastFile` is done then, and killed if it has not exited 30 s later. */
function runToEnd(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, lastFile?: string): Promise<{ exitCode: number; output: string }> {
	return new Promise((resolve, reject) => {
		const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
		let output = '';
		child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
		child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
		// n8n 1.49.0's executeBatch wrote its summary and then never exited when a node type was missing.
		let lastFileSeenAt: number | undefined;
		const watch = lastFile && setInterval(() => {
			if (!existsSync(lastFile)) return;
			lastFileSeenAt ??= Date.now();
			if (Date.now() - lastFileSeenAt > 30_000) child.kill('SIGKILL');
		}, 1_000);
		child.on('error', (error) => {
			clearInterval(watch);
			reject(error);
		});
		child.on('close', (code) => {
			clearInterval(watch);
			resolve({ exitCode: code ?? 1, output });
		});
	});
}

/** Free TCP ports on 127.0.0.1, distinct from each other (all held open until all are known). */
export async function findFreePorts(count: number): Promise<number[]> {
	const servers = await Promise.all(
		Array.from({ length: count }, () => new Promise<net.Server>((resolve, reject) => {
			const server = net.createServer();
			server.once('error', reject);
			server.listen(0, '127.0.0.1', () => resolve(server));
		})),
	);
	const ports = servers.map((server) => (server.address() as net.AddressInfo).port);
	await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
	return ports;
}

/**
 * Which n8n process: `start` (the main: editor, REST, triggers), or in queue mode `worker` (runs
 * executions from the queue) and `webhook` (serves production webhooks).
 */
export type N8nCommand = 'start' | 'worker' | 'webhook';

export interface StartN8nOptions {
	userFolder: string;
	/** Defaults to `start`. */
	command?: N8nCommand;
	/** Extra command-line arguments, e.g. `--concurrency=1` for a worker. */
	args?: string[];
	/** Names the log file `<userFolder>/<name>.log` (default `n8n`), for several processes on one folder. */
	name?: string;
	/** Defaults to a free port. A worker serves only its health check, on this port. */
	port?: number;
	/** Extra variables for n8n, e.g. GENERIC_TIMEZONE or N8N_LOG_LEVEL; they win over the harness's. */
	env?: NodeJS.ProcessEnv;
	/** Receives every line n8n prints (all of it is also appended to `<userFolder>/n8n.log`). */
	onOutput?: (line: string) => void;
	/** How long starting may take before it is given up, in ms (8 minutes: a start takes 20 s on a calm machine, minutes on a busy one; a crash ends the wait at once). */
	timeoutMs?: number;
}

export interface RunningN8n {
	command: N8nCommand;
	/** The n8n process's id (its task runner is a child of it). */
	pid: number;
	url: string;
	port: number;
	owner: typeof DEMO_OWNER;
	/** Session cookie and headers of the owner, for n8n's REST API (`${url}/rest/...`); empty but for `start`. */
	restHeaders: Record<string, string>;
	/** Everything n8n printed, across starts of this user folder. */
	logFile: string;
	/** Milliseconds from spawn to a healthy /healthz, and to every published workflow being active. */
	timings: { healthyMs: number; readyMs: number };
	/**
	 * Stops n8n (SIGTERM, then SIGKILL after `forceAfterMs`, 20 s by default) and resolves once its ports
	 * are free. n8n itself exits N8N_GRACEFUL_SHUTDOWN_TIMEOUT (30 s) after a SIGTERM, with runs still going.
	 */
	stop(forceAfterMs?: number): Promise<void>;
	/** Kills n8n at once (SIGKILL), as a crash would, and resolves once its ports are free. */
	kill(): Promise<void>;
}

/** What each process prints once it serves (an info log line). */
const READY_LINES: Record<N8nCommand, string> = {
	start: 'Editor is now accessible via',
	worker: 'n8n worker is now ready',
	webhook: 'Webhook listener waiting for requests.',
};
const BROWSER_ID = 'n8n-harness';
const running = new Set<ChildProcess>();
const EXIT_WITH_PARENT = path.join(__dirname, 'exitWithParent.js');

// A test runner that exits without calling stop() must not leave n8n behind (its task runner
// exits by itself once n8n is gone).
process.once('exit', () => {
	for (const child of running) child.kill('SIGKILL');
});

/**
 * Starts `n8n start` (or `n8n worker`, `n8n webhook`) on 127.0.0.1, waits for /healthz and its
 * ready line; for the main also creates (or logs in) the demo owner and waits until every
 * published workflow is active, so the first delivery finds its webhook.
 */
export async function startN8n(options: StartN8nOptions): Promise<RunningN8n> {
	const userFolder = path.resolve(options.userFolder);
	const command = options.command ?? 'start';
	const readyLine = READY_LINES[command];
	const timeoutMs = options.timeoutMs ?? 480_000;
	// A start imports what waited for it once it serves; any other command first with the CLI.
	if (command !== 'start') await importWaitingWithCli(userFolder);
	const runtime = await runtimeFor(userFolder);
	// n8n 1.x starts no task broker, nor does a webhook process: its port stays unbound, and another
	// process may take it meanwhile.
	const brokerBound = command !== 'webhook' && n8nMajorVersion((await readUserFolderSettings(userFolder)).n8nVersion) >= 2;
	const port = options.port ?? (await findFreePorts(1))[0];
	// A port asked for again (a restart keeps its URL) may be held for a while by another process that was given it.
	if (options.port !== undefined) await waitUntil(() => isPortFree(port), 60_000, `port ${port} to be free`);
	const url = `http://127.0.0.1:${port}`;
	const name = options.name ?? 'n8n';
	const env = await n8nEnv(runtime, userFolder, {
		N8N_PORT: String(port),
		N8N_LISTEN_ADDRESS: '127.0.0.1',
		N8N_HOST: '127.0.0.1',
		// The editor builds webhook URLs from protocol, host and port.
		N8N_PROTOCOL: 'http',
		N8N_SECURE_COOKIE: 'false',
		// A worker serves /healthz only on its health check port.
		...(command === 'worker' && { QUEUE_HEALTH_CHECK_ACTIVE: 'true', QUEUE_HEALTH_CHECK_PORT: String(port), N8N_PORT: undefined }),
		// Processes sharing a user folder must not write one event log.
		...(name !== 'n8n' && { N8N_EVENTBUS_LOGWRITER_LOGFULLPATH: path.join(userFolder, '.n8n', `n8nEventLog-${name}.log`) }),
		...options.env,
	});

	const startedAt = Date.now();
	// Same process group as the caller, so Ctrl-C in a terminal also stops n8n gracefully.
	// And n8n exits by itself when this process is killed (exitWithParent.js).
	const child = spawn(runtime.nodeBinary, ['--require', EXIT_WITH_PARENT, runtime.n8nBin, command, ...(options.args ?? [])], {
		cwd: userFolder,
		env: { ...env, AGENCY_INBOX_PARENT_PID: String(process.pid) },
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	running.add(child);
	const exited = new Promise<void>((resolve) => child.once('exit', () => {
		running.delete(child);
		resolve();
	}));
	const logFile = path.join(userFolder, `${name}.log`);
	const output = collectOutput(child, logFile, [readyLine], options.onOutput);

	const stopWith = async (signal: NodeJS.Signals, forceAfterMs = 20_000) => {
		if (child.exitCode === null && child.signalCode === null) {
			child.kill(signal);
			const forceKill = setTimeout(() => child.kill('SIGKILL'), forceAfterMs);
			await exited;
			clearTimeout(forceKill);
		}
		await waitUntil(async () => (await isPortFree(port)) && (!brokerBound || (await isPortFree(Number(env.N8N_RUNNERS_BROKER_PORT)))), 10_000, 'ports to be freed');
		await output.closed;
	};
	const stop = (forceAfterMs?: number) => stopWith('SIGTERM', forceAfterMs);

	try {
		const deadline = startedAt + timeoutMs;
		const failIfExited = () => {
			if (child.exitCode !== null || child.signalCode !== null) {
				throw new Error(`n8n exited (code ${child.exitCode}, signal ${child.signalCode}) while starting:\n${output.tail()}`);
			}
		};
		await waitUntil(async () => {
			failIfExited();
			return (await fetch(`${url}/healthz`).then((response) => response.ok, () => false));
		}, deadline - Date.now(), '/healthz');
		const healthyMs = Date.now() - startedAt;
		await waitUntil(async () => {
			failIfExited();
			return output.seen(readyLine);
		}, deadline - Date.now(), `"${readyLine}"`);
		let restHeaders: Record<string, string> = {};
		if (command === 'start') {
			restHeaders = await signInOwner(url);
			await importWaitingOverRest(userFolder, url, restHeaders);
			await publishAtStart(userFolder, url, restHeaders);
			await waitForPublishedWorkflows(url, restHeaders, deadline - Date.now());
		}
		return {
			command,
			pid: child.pid!,
			url,
			port,
			owner: DEMO_OWNER,
			restHeaders,
			logFile,
			timings: { healthyMs, readyMs: Date.now() - startedAt },
			stop,
			kill: () => stopWith('SIGKILL'),
		};
	} catch (error) {
		// What went wrong starting is the error to see, not a stop that went wrong after it.
		await stop().catch(() => undefined);
		throw error;
	}
}

/** n8n's answer while its last database ping failed (docs/development.md, "n8n 2.41.1 under load"). */
export const DATABASE_NOT_READY = 'Database is not ready!';

/**
 * fetch() for n8n's REST API: n8n 2.41 answers every request 503 "Database is not ready!" from a
 * failed database ping (its ping waited more than 5 s, as it does on a busy machine) until the next
 * one succeeds, 2 s later; such an answer is asked again, for up to 2 minutes. So is a request whose
 * connection failed (a busy n8n closing an idle connection as it is reused, or the n8n that listened
 * on the port before a restart) when it may be sent twice: a GET, or `repeatable`.
 */
export async function fetchFromN8n(url: string, init: RequestInit = {}, repeatable = (init.method ?? 'GET') === 'GET'): Promise<Response> {
	const deadline = Date.now() + 120_000;
	for (;;) {
		const response = await fetch(url, init).catch((error: Error) => {
			if (!repeatable || Date.now() > deadline) throw error;
			return undefined;
		});
		if (response && (response.status !== 503 || Date.now() > deadline || !(await response.clone().text()).includes(DATABASE_NOT_READY))) return response;
		await new Promise((resolve) => setTimeout(resolve, 1_000));
	}
}

/** Creates the owner on a fresh instance, else logs in; returns headers that authenticate REST calls. */
async function signInOwner(url: string): Promise<Record<string, string>> {
	const headers = { 'content-type': 'application/json', 'browser-id': BROWSER_ID };
	// Both may be sent again: a second setup is refused, a second login logs in again.
	const setup = await fetchFromN8n(`${url}/rest/owner/setup`, { method: 'POST', headers, body: JSON.stringify(DEMO_OWNER) }, true);
	// Refused when an earlier start of this user folder already set the owner up. n8n 1.x before about
	// 1.80 reads the login's `email`, later versions `emailOrLdapLoginId`: both are sent.
	const response = setup.ok
		? setup
		: await fetchFromN8n(
				`${url}/rest/login`,
				{ method: 'POST', headers, body: JSON.stringify({ email: DEMO_OWNER.email, emailOrLdapLoginId: DEMO_OWNER.email, password: DEMO_OWNER.password }) },
				true,
			);
	if (!response.ok) {
		throw new Error(`could not set up (${setup.status} ${await setup.text()}) nor log in (${response.status} ${await response.text()}) the demo owner`);
	}
	const cookie = response.headers.getSetCookie().map((line) => line.split(';')[0]).join('; ');
	return { ...headers, cookie };
}

interface PublicationStatus {
	status: 'not_published' | 'in_progress' | 'published' | 'partial' | 'failed';
	triggers: Array<{ nodeId: string; status: string; errorMessage: string | null }>;
}

/** The workflows n8n has published (active), as its editor lists them. */
async function listPublishedWorkflows(url: string, headers: Record<string, string>): Promise<Array<{ id: string; name: string }>> {
	const response = await fetchFromN8n(`${url}/rest/workflows?filter=${encodeURIComponent(JSON.stringify({ active: true }))}`, { headers });
	if (!response.ok) throw new Error(`listing workflows failed: ${response.status} ${await response.text()}`);
	return ((await response.json()) as { data: Array<{ id: string; name: string }> }).data;
}

/** The ids of the workflows a running n8n has published: what `npm start` imported, or what its user changed since. */
export async function publishedWorkflowIds(n8n: RunningN8n): Promise<string[]> {
	return (await listPublishedWorkflows(n8n.url, n8n.restHeaders)).map((workflow) => workflow.id);
}

/**
 * n8n 2.x activates published workflows in the background after start (its publication service);
 * the editor's own publication-status endpoint says when each one is live or why it failed.
 * n8n 1.x has no such endpoint and activates before it prints its ready line.
 */
async function waitForPublishedWorkflows(url: string, headers: Record<string, string>, timeoutMs: number): Promise<void> {
	for (const workflow of await listPublishedWorkflows(url, headers)) {
		let latest: PublicationStatus | undefined;
		await waitUntil(async () => {
			const response = await fetchFromN8n(`${url}/rest/workflows/${workflow.id}/publication-status`, { headers });
			if (response.status === 404) return true;
			latest = ((await response.json()) as { data: PublicationStatus }).data;
			return latest.status !== 'not_published' && latest.status !== 'in_progress';
		}, timeoutMs, `workflow "${workflow.name}" to be published`);
		if (latest && latest.status !== 'published') {
			const errors = latest.triggers.map((trigger) => trigger.errorMessage).filter(Boolean).join('; ');
			throw new Error(`workflow "${workflow.name}" (${workflow.id}) is ${latest.status}: ${errors}`);
		}
	}
}

/**
 * Publishes or unpublishes a workflow while n8n runs, as the editor's Publish and Unpublish buttons do
 * (n8n 2.x), and waits until n8n says the change is live.
 */
export async function setPublished(n8n: RunningN8n, workflowId: string, published: boolean): Promise<void> {
	await setPublishedAt(n8n.url, n8n.restHeaders, workflowId, published);
}

/**
 * Publishes workflows one click at a time, as a user does, then waits for all of them: n8n 2.41 checks
 * a workflow's node parameters when asked to publish it, and that check once failed for a node of one
 * workflow ("Error validating node parameters") while eight were asked for at the same moment.
 */
export async function publishOneByOne(n8n: RunningN8n, workflowIds: string[]): Promise<void> {
	for (const workflowId of workflowIds) await askToSetPublished(n8n.url, n8n.restHeaders, workflowId, true);
	await Promise.all(workflowIds.map((workflowId) => untilPublished(n8n.url, n8n.restHeaders, workflowId, true)));
}

async function workflowCall(url: string, headers: Record<string, string>, workflowId: string, method: string, route: string, body?: object) {
	// Publishing or unpublishing twice is the same as once.
	const response = await fetchFromN8n(`${url}/rest/workflows/${workflowId}${route}`, { method, headers, body: body && JSON.stringify(body) }, true);
	if (!response.ok) throw new Error(`${method} /rest/workflows/${workflowId}${route}: ${response.status} ${await response.text()}`);
	return ((await response.json()) as { data: { versionId?: string; status?: PublicationStatus['status'] } }).data;
}

/** n8n 2.41.1's answer when its check of a node's parameters threw, now and then under load (docs/development.md, "n8n 2.41.1 under load"). */
const PARAMETER_CHECK_THREW = 'Error validating node parameters';

/** The editor's Publish (of the workflow's current version) or Unpublish click; a Publish that met PARAMETER_CHECK_THREW is clicked again, up to 3 times. */
async function askToSetPublished(url: string, headers: Record<string, string>, workflowId: string, published: boolean): Promise<void> {
	if (published) {
		const { versionId } = await workflowCall(url, headers, workflowId, 'GET', '');
		for (let click = 1; ; click++) {
			try {
				await workflowCall(url, headers, workflowId, 'POST', '/activate', { versionId });
				return;
			} catch (error) {
				if (click === 3 || !String(error).includes(PARAMETER_CHECK_THREW)) throw error;
				await new Promise((resolve) => setTimeout(resolve, 2_000));
			}
		}
	} else {
		await workflowCall(url, headers, workflowId, 'POST', '/deactivate', {});
	}
}

/**
 * Waits until n8n says the workflow is (un)published. n8n awaits each trigger's activation (a polling
 * trigger's first poll): minutes on a busy machine, within the publication lease this harness gives
 * n8n (N8N_WORKFLOW_PUBLICATION_OUTBOX_LEASE_SECONDS).
 */
async function untilPublished(url: string, headers: Record<string, string>, workflowId: string, published: boolean): Promise<void> {
	const wanted = published ? 'published' : 'not_published';
	await waitUntil(async () => (await workflowCall(url, headers, workflowId, 'GET', '/publication-status')).status === wanted, 600_000, `workflow ${workflowId} to be ${wanted}`);
}

async function setPublishedAt(url: string, headers: Record<string, string>, workflowId: string, published: boolean): Promise<void> {
	await askToSetPublished(url, headers, workflowId, published);
	await untilPublished(url, headers, workflowId, published);
}

interface CollectedOutput {
	/** Whether a line containing one of the watched texts was printed. */
	seen(watchedText: string): boolean;
	tail(): string;
	closed: Promise<void>;
}

/** Appends the child's output to logFile, hands each line to onLine and keeps the latest lines. */
function collectOutput(child: ChildProcess, logFile: string, watchedTexts: string[], onLine?: (line: string) => void): CollectedOutput {
	const logStream = createWriteStream(logFile, { flags: 'a' });
	const recentLines: string[] = [];
	const seenTexts = new Set<string>();
	const feed = (stream: NodeJS.ReadableStream) => {
		let unfinished = '';
		stream.on('data', (chunk: Buffer) => {
			logStream.write(chunk);
			const lines = (unfinished + chunk.toString()).split('\n');
			unfinished = lines.pop() ?? '';
			for (const line of lines) {
				onLine?.(line);
				recentLines.push(line);
				if (recentLines.length > 60) recentLines.shift();
				for (const text of watchedTexts) if (line.includes(text)) seenTexts.add(text);
			}
		});
	};
	feed(child.stdout!);
	feed(child.stderr!);
	const closed = new Promise<void>((resolve) => child.once('close', () => logStream.end(resolve)));
	return { seen: (text) => seenTexts.has(text), tail: () => recentLines.join('\n'), closed };
}

function isPortFree(port: number): Promise<boolean> {
	return new Promise((resolve) => {
		const server = net.createServer();
		server.once('error', () => resolve(false));
		server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
	});
}

async function waitUntil(condition: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	while (!(await condition())) {
		if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
		await new Promise((resolve) => setTimeout(resolve, 200));
	}
}
