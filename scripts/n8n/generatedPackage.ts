/**
 * Throwaway community packages written at run time in plain JS, for the harness's smoke test and
 * the n8n webhook benchmark's floor. Install one with prepareUserFolder (harness.ts); several can
 * share a user folder. n8n scans only folders named `n8n-nodes-*`, so the name must start so.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';

export interface GeneratedPackage {
	/** `n8n-nodes-...`; node types are `<name>.<node name>`. */
	name: string;
	/** Class name -> source of `dist/nodes/<Class>/<Class>.node.js`. */
	nodes: Record<string, string>;
	/** Class name -> source of `dist/credentials/<Class>.credentials.js`. */
	credentials?: Record<string, string>;
	/** More files by path, e.g. one outside `files` to prove it is not installed. */
	otherFiles?: Record<string, string>;
}

export async function writeCommunityPackage(packageDir: string, generated: GeneratedPackage): Promise<void> {
	if (!generated.name.startsWith('n8n-nodes-')) throw new Error(`${generated.name}: n8n loads only packages named n8n-nodes-*`);
	const nodeFiles = Object.fromEntries(Object.entries(generated.nodes).map(([name, source]) => [`dist/nodes/${name}/${name}.node.js`, source]));
	const credentialFiles = Object.fromEntries(
		Object.entries(generated.credentials ?? {}).map(([name, source]) => [`dist/credentials/${name}.credentials.js`, source]),
	);
	const packageJson = {
		name: generated.name,
		version: '0.0.1',
		keywords: ['n8n-community-node-package'],
		license: 'MIT',
		files: ['dist'],
		n8n: { n8nNodesApiVersion: 1, credentials: Object.keys(credentialFiles), nodes: Object.keys(nodeFiles) },
		peerDependencies: { 'n8n-workflow': '*' },
	};
	const files = { 'package.json': JSON.stringify(packageJson, null, '\t'), ...nodeFiles, ...credentialFiles, ...generated.otherFiles };
	for (const [file, content] of Object.entries(files)) {
		await fs.mkdir(path.dirname(path.join(packageDir, file)), { recursive: true });
		await fs.writeFile(path.join(packageDir, file), content);
	}
}

export interface WebhookTriggerSource {
	className: string;
	/** The node's name: its type is `<package>.<name>`. */
	name: string;
	displayName: string;
	description: string;
	/** Without `isFullPath`, n8n serves it on /webhook/<webhookId>/<path>. */
	path: string;
	/** 'onReceived' answers before the run; 'lastNode' answers with the last node's output. */
	responseMode: 'onReceived' | 'lastNode';
}

/** A POST webhook trigger that verifies nothing and starts a run with the request's body. */
export function webhookTriggerSource(trigger: WebhookTriggerSource): string {
	return `'use strict';
class ${trigger.className} {
	constructor() {
		this.description = {
			displayName: ${JSON.stringify(trigger.displayName)},
			name: ${JSON.stringify(trigger.name)},
			group: ['trigger'],
			version: 1,
			description: ${JSON.stringify(trigger.description)},
			defaults: { name: ${JSON.stringify(trigger.displayName)} },
			inputs: [],
			outputs: ['main'],
			webhooks: [{ name: 'default', httpMethod: 'POST', responseMode: ${JSON.stringify(trigger.responseMode)}, path: ${JSON.stringify(trigger.path)} }],
			properties: [],
		};
	}
	async webhook() {
		return { workflowData: [[{ json: { body: this.getBodyData() } }]] };
	}
}
exports.${trigger.className} = ${trigger.className};
`;
}
