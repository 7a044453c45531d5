/**
 * The benchmarks' floor: a minimal community trigger, generated at run time as its own package. Its
 * webhook() only returns the body, so it pays what n8n puts on any community trigger and nothing of
 * ours; ours against it is the cost of our own work.
 */
import path from 'node:path';

import { webhookTriggerSource, writeCommunityPackage } from '../../scripts/n8n/generatedPackage';
import type { WorkflowToImport } from '../../scripts/n8n/harness';

const MINIMAL_PACKAGE = 'n8n-nodes-bench-floor';
const MINIMAL_WEBHOOK_ID = '9a8b7c6d-0000-4000-8000-00000000a003';

export const MINIMAL_WORKFLOW: WorkflowToImport = {
	id: 'benchFloorTrig01',
	name: 'Bench: the minimal community trigger',
	nodes: [
		{ id: '9a8b7c6d-0000-4000-8000-00000000b003', name: 'Bench Floor Trigger', type: `${MINIMAL_PACKAGE}.benchFloorTrigger`, typeVersion: 1, position: [0, 0], webhookId: MINIMAL_WEBHOOK_ID, parameters: {} },
	],
	connections: {},
};

/** Where n8n at `origin` (a main or a webhook process) serves the minimal trigger. */
export const minimalTriggerUrl = (origin: string) => `${origin}/webhook/${MINIMAL_WEBHOOK_ID}/delivery`;

/** Writes the package into `workDir` and answers its folder, ready for prepareUserFolder. */
export async function writeMinimalTriggerPackage(workDir: string): Promise<string> {
	const packageDir = path.join(workDir, MINIMAL_PACKAGE);
	const source = webhookTriggerSource({
		className: 'BenchFloorTrigger',
		name: 'benchFloorTrigger',
		displayName: 'Bench Floor Trigger',
		description: 'Starts the workflow with any POST body, verifying nothing',
		path: 'delivery',
		responseMode: 'onReceived',
	});
	await writeCommunityPackage(packageDir, { name: MINIMAL_PACKAGE, nodes: { BenchFloorTrigger: source } });
	return packageDir;
}
