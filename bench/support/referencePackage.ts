/**
 * An earlier commit of this package beside the current one in the same n8n, for the benches that
 * compare (BENCH_REFERENCE=<commit>): its sources from git, built in a throwaway folder with this
 * checkout's node_modules, installed under another package name so that its node types do not clash
 * with ours (n8n names a node type `<package>.<node>`).
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';

import { NODE_TYPES, PACKAGE_NAME, REPO_ROOT, type WorkflowNode } from '../../scripts/n8n/agencyInbox';
import { prepareUserFolder, type WorkflowToImport } from '../../scripts/n8n/harness';
import { captureOutput, withoutNpmVariables } from '../../scripts/n8n/install';
import { makeTempDir, removeTempDir } from '../../scripts/tempDirs';

/** The commit to compare with, from BENCH_REFERENCE; undefined when none is asked for. */
export const REFERENCE_COMMIT = process.env.BENCH_REFERENCE || undefined;

export const REFERENCE_PACKAGE_NAME = `${PACKAGE_NAME}-reference`;

/** The webhook trigger's node type in the reference package. */
export const REFERENCE_TRIGGER_TYPE = `${REFERENCE_PACKAGE_NAME}.agencyInboxTrigger`;

/** Builds `commit` and installs it into the user folder as REFERENCE_PACKAGE_NAME (before our own package). */
export async function installReferencePackage(userFolder: string, commit: string, n8nVersion: string): Promise<void> {
	const sourceDir = makeTempDir('bench-reference');
	try {
		const archive = path.join(sourceDir, 'sources.tar');
		await captureOutput('git', ['archive', `--output=${archive}`, commit], REPO_ROOT, process.env);
		await captureOutput('tar', ['-xf', archive, '-C', sourceDir], sourceDir, process.env);
		await fs.rm(archive);
		await fs.symlink(path.join(REPO_ROOT, 'node_modules'), path.join(sourceDir, 'node_modules'));
		await captureOutput('npm', ['run', 'build', '--silent'], sourceDir, withoutNpmVariables(process.env));
		const packageJsonFile = path.join(sourceDir, 'package.json');
		const packageJson = JSON.parse(await fs.readFile(packageJsonFile, 'utf8'));
		await fs.writeFile(packageJsonFile, JSON.stringify({ ...packageJson, name: REFERENCE_PACKAGE_NAME }, null, 2));
		await prepareUserFolder({ userFolder, packageDir: sourceDir, n8nVersion });
	} finally {
		removeTempDir(sourceDir);
	}
}

/** The workflow with each Agency Inbox Trigger taken from the reference package (its other nodes ours). */
export function withReferenceTrigger(workflow: WorkflowToImport): WorkflowToImport {
	const nodes = (workflow.nodes as WorkflowNode[]).map((node) => (node.type === NODE_TYPES.trigger ? { ...node, type: REFERENCE_TRIGGER_TYPE } : node));
	return { ...workflow, nodes };
}
