/**
 * n8n in queue mode on this machine: a throwaway Postgres cluster and Redis (Debian's `postgresql`
 * and `redis-server`), one main, workers and webhook processes of the pinned n8n, all on loopback
 * and free ports, all under one temp dir that `stop()` removes. Used by `npm run test:queue`,
 * `npm start -- --queue` and the queue benchmark.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, promises as fs, readdirSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, installIntoN8n } from './agencyInbox';
import { captureOutput } from './install';
import { findFreePorts, prepareUserFolder, startN8n, type CredentialToImport, type N8nCommand, type RunningN8n, type WorkflowToImport } from './harness';

type Log = (line: string) => void;

/** Postgres refuses to run as root: the tests then run it as this system user. */
const POSTGRES_USER = 'postgres';

/** The newest Postgres under /usr/lib/postgresql (Debian's layout). */
export function postgresBinDir(): string {
	const root = '/usr/lib/postgresql';
	const versions = existsSync(root) ? readdirSync(root).filter((entry) => existsSync(path.join(root, entry, 'bin', 'initdb'))) : [];
	if (versions.length === 0) throw new Error('Postgres is not installed: apt-get install postgresql (its binaries go to /usr/lib/postgresql/<version>/bin)');
	const newest = versions.sort((a, b) => Number(a) - Number(b))[versions.length - 1];
	return path.join(root, newest, 'bin');
}

function redisServerBinary(): string {
	for (const candidate of ['/usr/bin/redis-server', '/usr/local/bin/redis-server']) if (existsSync(candidate)) return candidate;
	throw new Error('redis-server is not installed: apt-get install redis-server');
}

/** The Debian packages queue mode needs that this machine lacks, e.g. `['redis-server']`. */
export function missingQueuePackages(): string[] {
	const installed = (locate: () => string) => {
		try {
			locate();
			return true;
		} catch {
			return false;
		}
	};
	return Object.entries({ postgresql: postgresBinDir, 'redis-server': redisServerBinary })
		.filter(([, locate]) => !installed(locate))
		.map(([debianPackage]) => debianPackage);
}

export const runsAsRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

/** A command as the Postgres system user when we are root, else as ourselves. */
function asPostgresUser(command: string, args: string[]): [string, string[]] {
	return runsAsRoot() ? ['runuser', ['-u', POSTGRES_USER, '--', command, ...args]] : [command, args];
}

/** Runs `file args` when this process is gone while `watchedPath` exists (stopWithParent.js, detached). */
function stopWithThisProcess(watchedPath: string, file: string, args: string[]): void {
	spawn(process.execPath, [path.join(__dirname, 'stopWithParent.js'), String(process.pid), watchedPath, file, ...args], { detached: true, stdio: 'ignore' }).unref();
}

export interface RunningPostgres {
	port: number;
	/** DB_* variables that point n8n at it. */
	n8nEnv: Record<string, string>;
	/** Runs one SQL statement in n8n's database (psql); returns its rows unaligned, `|` between columns. */
	query(sql: string): Promise<string>;
	stop(): Promise<void>;
}

/** A fresh cluster in `dir` (created, owned by the Postgres user when root), listening on 127.0.0.1 only. */
export async function startPostgres(dir: string): Promise<RunningPostgres> {
	const bin = postgresBinDir();
	const dataDir = path.join(dir, 'data');
	const socketDir = path.join(dir, 'socket');
	await fs.mkdir(socketDir, { recursive: true });
	if (runsAsRoot()) {
		// The Postgres user must be able to reach its folder through ours.
		await fs.chmod(path.dirname(dir), 0o711);
		await captureOutput('chown', ['-R', `${POSTGRES_USER}:`, dir], dir, process.env);
	}
	const [port] = await findFreePorts(1);
	const password = 'agency-inbox';
	const passwordFile = path.join(dir, 'password');
	await fs.writeFile(passwordFile, password);
	if (runsAsRoot()) await captureOutput('chown', [`${POSTGRES_USER}:`, passwordFile], dir, process.env);
	const run = (command: string, args: string[]) => {
		const [file, fileArgs] = asPostgresUser(path.join(bin, command), args);
		return captureOutput(file, fileArgs, dir, { PATH: process.env.PATH, LANG: 'C.UTF-8' });
	};
	await run('initdb', ['-D', dataDir, '-U', 'n8n', '--auth-local=trust', '--auth-host=md5', `--pwfile=${passwordFile}`, '-E', 'UTF8', '--locale=C']);
	const options = `-c listen_addresses=127.0.0.1 -p ${port} -c unix_socket_directories=${socketDir} -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
	await run('pg_ctl', ['-D', dataDir, '-o', options, '-l', path.join(dir, 'postgres.log'), '-w', '-t', '60', 'start']);
	stopWithThisProcess(path.join(dataDir, 'postmaster.pid'), ...asPostgresUser(path.join(bin, 'pg_ctl'), ['-D', dataDir, '-m', 'immediate', 'stop']));
	await run('createdb', ['-h', socketDir, '-p', String(port), '-U', 'n8n', 'n8n']);
	return {
		port,
		n8nEnv: {
			DB_TYPE: 'postgresdb',
			DB_POSTGRESDB_HOST: '127.0.0.1',
			DB_POSTGRESDB_PORT: String(port),
			DB_POSTGRESDB_DATABASE: 'n8n',
			DB_POSTGRESDB_USER: 'n8n',
			DB_POSTGRESDB_PASSWORD: password,
		},
		query: async (sql) => (await run('psql', ['-h', socketDir, '-p', String(port), '-U', 'n8n', '-d', 'n8n', '-X', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-c', sql])).trim(),
		stop: async () => {
			await run('pg_ctl', ['-D', dataDir, '-m', 'fast', '-w', 'stop']).catch(() => undefined);
		},
	};
}

export interface RunningRedis {
	port: number;
	stop(): Promise<void>;
}

/** Redis on 127.0.0.1 without persistence. */
export async function startRedis(dir: string): Promise<RunningRedis> {
	const [port] = await findFreePorts(1);
	await fs.mkdir(dir, { recursive: true });
	const pidFile = path.join(dir, 'redis.pid');
	const child: ChildProcess = spawn(redisServerBinary(), ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--pidfile', pidFile], {
		cwd: dir,
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	let output = '';
	child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
	child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
	const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
	const deadline = Date.now() + 20_000;
	while (!output.includes('Ready to accept connections')) {
		if (child.exitCode !== null || Date.now() > deadline) throw new Error(`redis-server did not start:\n${output}`);
		await new Promise((resolve) => setTimeout(resolve, 100));
	}
	stopWithThisProcess(pidFile, 'kill', ['-9', String(child.pid)]);
	return {
		port,
		stop: async () => {
			if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
			await exited;
		},
	};
}

/** Variables of every n8n process in queue mode, besides the database. */
export function queueModeEnv(redisPort: number): Record<string, string> {
	return {
		EXECUTIONS_MODE: 'queue',
		QUEUE_BULL_REDIS_HOST: '127.0.0.1',
		QUEUE_BULL_REDIS_PORT: String(redisPort),
		// Production webhooks only in the webhook processes.
		N8N_DISABLE_PRODUCTION_MAIN_PROCESS: 'true',
		// Runs are read back from the database by the tests and the editor.
		EXECUTIONS_DATA_SAVE_ON_SUCCESS: 'all',
		EXECUTIONS_DATA_SAVE_ON_ERROR: 'all',
	};
}

export interface QueueTopologyOptions {
	/** A temp dir of the caller's (agency-inbox-*), holding the Postgres cluster, Redis and the n8n user folder. */
	workDir: string;
	log?: Log;
}

export interface QueueInfrastructure {
	postgres: RunningPostgres;
	redis: RunningRedis;
	/** The DB_* variables to bind to the n8n user folder (prepareUserFolder's `env`). */
	databaseEnv: Record<string, string>;
	stop(): Promise<void>;
}

/**
 * Starts two services at once; when one fails, stops the other before throwing: neither dies with
 * us (Redis outlives its parent, Postgres runs in its own session).
 */
async function bothOrNeither<A extends { stop(): Promise<void> }, B extends { stop(): Promise<void> }>(a: Promise<A>, b: Promise<B>): Promise<[A, B]> {
	const [first, second] = await Promise.allSettled([a, b]);
	if (first.status === 'fulfilled' && second.status === 'fulfilled') return [first.value, second.value];
	await Promise.all([first, second].map((result) => (result.status === 'fulfilled' ? result.value.stop() : undefined)));
	throw first.status === 'rejected' ? first.reason : (second as PromiseRejectedResult).reason;
}

/** Postgres and Redis for one topology; stopped by `stop()`, which the caller calls also on failure. */
export async function startQueueInfrastructure(options: QueueTopologyOptions): Promise<QueueInfrastructure> {
	const log = options.log ?? (() => undefined);
	const startedAt = Date.now();
	const [postgres, redis] = await bothOrNeither(startPostgres(path.join(options.workDir, 'postgres')), startRedis(path.join(options.workDir, 'redis')));
	log(`Postgres on 127.0.0.1:${postgres.port}, Redis on 127.0.0.1:${redis.port} (${Date.now() - startedAt} ms)`);
	return {
		postgres,
		redis,
		databaseEnv: postgres.n8nEnv,
		stop: async () => {
			await Promise.all([postgres.stop(), redis.stop()]);
		},
	};
}

export interface QueueProcessOptions {
	userFolder: string;
	redisPort: number;
	/** Extra variables of every process (N8N_LOG_LEVEL, GENERIC_TIMEZONE, ...). */
	env?: NodeJS.ProcessEnv;
	/** Executions a worker runs at once (`n8n worker --concurrency`); n8n's default is 10. */
	workerConcurrency?: number;
	onOutput?: (name: string, line: string) => void;
}

/** One process of the topology, restartable under the same name, port and log. */
export interface QueueProcess {
	name: string;
	command: N8nCommand;
	current: RunningN8n;
	/** Stops it (SIGTERM; after a kill, just waits for its ports) and starts it again (a worker on another port); `env` is added to its variables from then on. */
	restart(env?: NodeJS.ProcessEnv): Promise<void>;
}

/** Starts one n8n process of a queue-mode topology; `name` names its log file (`<userFolder>/<name>.log`). */
export async function startQueueProcess(options: QueueProcessOptions, command: N8nCommand, name: string, port?: number): Promise<QueueProcess> {
	let addedEnv: NodeJS.ProcessEnv = {};
	const start = (fixedPort?: number) =>
		startN8n({
			userFolder: options.userFolder,
			command,
			name,
			port: fixedPort,
			args: command === 'worker' ? [`--concurrency=${options.workerConcurrency ?? 10}`] : [],
			env: { ...queueModeEnv(options.redisPort), ...options.env, ...addedEnv },
			onOutput: options.onOutput && ((line) => options.onOutput!(name, line)),
			// Workers and webhook processes start side by side; on a busy 2-CPU machine that took over 3 minutes.
			timeoutMs: 420_000,
		});
	const queueProcess: QueueProcess = {
		name,
		command,
		current: await start(port),
		restart: async (env) => {
			await queueProcess.current.stop();
			addedEnv = { ...addedEnv, ...env };
			// A worker's port serves only its health check, so it takes a fresh one: any process on the machine
			// may have been given the freed one meanwhile (a clean-clone run failed so). The main and webhook
			// processes keep theirs: their URLs are registered.
			queueProcess.current = await start(command === 'worker' ? undefined : queueProcess.current.port);
		},
	};
	return queueProcess;
}

/**
 * Which process ran each execution, from the workers' logs ("Worker started execution <id>"):
 * execution id → worker name.
 */
export async function executionsByWorker(userFolder: string, workerNames: string[]): Promise<Map<string, string>> {
	const byExecution = new Map<string, string>();
	for (const name of workerNames) {
		const file = path.join(userFolder, `${name}.log`);
		if (!existsSync(file)) continue;
		for (const match of (await fs.readFile(file, 'utf8')).matchAll(/Worker started execution (\d+)/g)) byExecution.set(match[1], name);
	}
	return byExecution;
}

export interface QueueTopology {
	userFolder: string;
	infrastructure: QueueInfrastructure;
	main: QueueProcess;
	workers: QueueProcess[];
	webhookProcesses: QueueProcess[];
	/** Starts one more `n8n webhook` process on the same database and queue (another port). */
	addWebhookProcess(): Promise<QueueProcess>;
	/** Stops every n8n process, then Redis and Postgres; never throws, so it can run after a failure. */
	stop(): Promise<void>;
}

export interface StartQueueTopologyOptions extends QueueTopologyOptions {
	n8nVersion?: string;
	credentials: CredentialToImport[];
	workflows: WorkflowToImport[];
	publish: string[];
	workers?: number;
	workerConcurrency?: number;
	webhookProcesses?: number;
	/** Extra variables of every n8n process, e.g. N8N_LOG_LEVEL. */
	env?: NodeJS.ProcessEnv;
	/** A port for the main (the editor), e.g. 5678 for people; defaults to a free one. */
	mainPort?: number;
	webhookPorts?: number[];
	onOutput?: (name: string, line: string) => void;
	/** Folders of further built community packages installed beside ours, e.g. a benchmark's minimal trigger. */
	otherPackageDirs?: string[];
}

/**
 * Postgres, Redis, our package with the given credentials and workflows (imported and published
 * against Postgres), one main, `workers` workers and `webhookProcesses` webhook processes. On a
 * failure while starting, whatever started is stopped before the error is thrown.
 */
export async function startQueueTopology(options: StartQueueTopologyOptions): Promise<QueueTopology> {
	const log = options.log ?? (() => undefined);
	const infrastructure = await startQueueInfrastructure(options);
	const userFolder = path.join(options.workDir, 'n8n');
	const started: QueueProcess[] = [];
	const stop = async () => {
		for (const queueProcess of [...started].reverse()) await queueProcess.current.stop().catch((error) => log(`stopping ${queueProcess.name}: ${error}`));
		await infrastructure.stop().catch((error) => log(`stopping Postgres and Redis: ${error}`));
	};
	try {
		await prepareUserFolder({ userFolder, packageDir: REPO_ROOT, n8nVersion: options.n8nVersion, env: infrastructure.databaseEnv });
		for (const packageDir of options.otherPackageDirs ?? []) await prepareUserFolder({ userFolder, packageDir, n8nVersion: options.n8nVersion });
		await installIntoN8n({ userFolder, n8nVersion: options.n8nVersion, credentials: options.credentials, workflows: options.workflows, publish: options.publish, log });
		const processOptions: QueueProcessOptions = {
			userFolder,
			redisPort: infrastructure.redis.port,
			env: options.env,
			workerConcurrency: options.workerConcurrency,
			onOutput: options.onOutput,
		};
		const startOne = async (command: N8nCommand, name: string, port?: number) => {
			const queueProcess = await startQueueProcess(processOptions, command, name, port);
			started.push(queueProcess);
			return queueProcess;
		};
		// The main runs the migrations and activates the workflows (registers their webhooks in the database).
		let startedAt = Date.now();
		const main = await startOne('start', 'main', options.mainPort);
		log(`main ready in ${Date.now() - startedAt} ms at ${main.current.url}`);
		startedAt = Date.now();
		const webhookProcesses: QueueProcess[] = [];
		const addWebhookProcess = async () => {
			const queueProcess = await startOne('webhook', `webhook-${webhookProcesses.length + 1}`, options.webhookPorts?.[webhookProcesses.length]);
			webhookProcesses.push(queueProcess);
			return queueProcess;
		};
		const [workers] = await Promise.all([
			Promise.all(Array.from({ length: options.workers ?? 2 }, (_, index) => startOne('worker', `worker-${index + 1}`))),
			(async () => {
				for (let index = 0; index < (options.webhookProcesses ?? 1); index++) await addWebhookProcess();
			})(),
		]);
		log(`${workers.length} workers and ${webhookProcesses.length} webhook process(es) ready in ${Date.now() - startedAt} ms`);
		return { userFolder, infrastructure, main, workers, webhookProcesses, addWebhookProcess, stop };
	} catch (error) {
		await stop();
		throw error;
	}
}
