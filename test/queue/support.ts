/**
 * Shared by the queue-mode tests: the topology started once per file (a main, workers, webhook
 * processes on Postgres and Redis), which worker ran an execution, and the workflow pieces several
 * files use (an HTTP Request node posting to the sandbox's CRM, a polling trigger feeding it).
 */
import { buildPackage } from '../../scripts/n8n/agencyInbox';
import { N8N_WITHOUT_EDITOR, ensureN8n, type WorkflowToImport } from '../../scripts/n8n/harness';
import { SELECTED_N8N_VERSION } from '../../scripts/n8n/install';
import { executionsByWorker, startQueueTopology, type QueueTopology, type StartQueueTopologyOptions } from '../../scripts/n8n/queue';
import { makeTempDir, removeTempDir } from '../../scripts/tempDirs';
import type { ExecutionSummary } from '../e2e/support';

export const n8nVersion = SELECTED_N8N_VERSION;
export const SETUP_TIMEOUT_MS = 30 * 60_000;
/** startQueueTopology's default: two workers. */
export const WORKER_NAMES = ['worker-1', 'worker-2'];

export const progress = (line: string) => process.stderr.write(`${line}\n`);

export interface QueueForTests {
	topology: QueueTopology;
	/** Removes the temp dir after `topology.stop()`. */
	removeWorkDir(): void;
}

/** Builds the package, installs n8n if needed and starts the topology in a temp dir named after `name`. */
export async function startQueueForTests(name: string, options: Omit<StartQueueTopologyOptions, 'workDir' | 'n8nVersion' | 'log'>): Promise<QueueForTests> {
	await Promise.all([buildPackage(progress), ensureN8n(n8nVersion, progress)]);
	const workDir = makeTempDir(name);
	try {
		// The tests use the main's REST API, never its editor.
		const topology = await startQueueTopology({ ...options, env: { ...N8N_WITHOUT_EDITOR, ...options.env }, workDir, n8nVersion, log: progress });
		return { topology, removeWorkDir: () => removeTempDir(workDir) };
	} catch (error) {
		removeTempDir(workDir);
		throw error;
	}
}

/** The worker that ran each execution (from the workers' logs), undefined for one no worker started. */
export async function workersThatRan(topology: QueueTopology, executions: ExecutionSummary[]): Promise<Array<string | undefined>> {
	const byExecution = await executionsByWorker(topology.userFolder, WORKER_NAMES);
	return executions.map((execution) => byExecution.get(execution.id));
}

export const credentialRef = (credential: { id: string; name: string }) => ({ agencyInboxApi: credential });

let nodeSerial = 0;
/** A node id unique in this test file. */
export const nodeId = () => `9e000000-0000-4000-8000-${String(++nodeSerial).padStart(12, '0')}`;

/** An HTTP Request node posting one row per item (or one row per run) to the sandbox's CRM. */
export function crmNode(sandboxOrigin: string, jsonBody: string, executeOnce = false): object {
	return {
		id: nodeId(),
		name: 'Post to CRM',
		type: 'n8n-nodes-base.httpRequest',
		typeVersion: 4.2,
		position: [600, 0],
		executeOnce,
		parameters: { method: 'POST', url: `${sandboxOrigin}/_sandbox/crm`, sendBody: true, specifyBody: 'json', jsonBody, options: {} },
	};
}

export interface PollingToCrm {
	id: string;
	name: string;
	trigger: { name: string; type: string; parameters: Record<string, unknown> };
	credential: { id: string; name: string };
	sandboxOrigin: string;
	/** The CRM row of an item, an expression (`={{ JSON.stringify(...) }}`). */
	row: string;
}

/** A polling trigger of ours whose every item becomes one CRM row. */
export function pollingToCrm({ id, name, trigger, credential, sandboxOrigin, row }: PollingToCrm): WorkflowToImport {
	return {
		id,
		name,
		nodes: [
			{ id: nodeId(), name: trigger.name, type: trigger.type, typeVersion: 1, position: [0, 0], parameters: trigger.parameters, credentials: credentialRef(credential) },
			crmNode(sandboxOrigin, row),
		],
		connections: { [trigger.name]: { main: [[{ node: 'Post to CRM', type: 'main', index: 0 }]] } },
		settings: { executionOrder: 'v1' },
	};
}
