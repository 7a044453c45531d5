/**
 * The newest n8n that installs from the registry, and whether the compatibility ladder has it:
 *
 *   npm run compat:newest
 *
 * Walks the registry's releases of n8n from the newest down (pre-releases left out) and has npm
 * resolve each one's whole dependency tree without installing anything (`npm install --dry-run`,
 * with the overrides scripts/n8n/install.ts uses). A release that pins a package the registry does
 * not have fails there (n8n 2.41.3 pins @n8n/agents 0.26.2). Stops at the first that resolves; a
 * resolve takes one to three minutes. Exits with 0 when compatLadder.json's newest rung is that
 * version, else 1.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import rcompare from 'semver/functions/rcompare';
import prerelease from 'semver/functions/prerelease';
import valid from 'semver/functions/valid';
import { captureOutput, overridesFor, withoutNpmVariables } from './install';
import ladder from './compatLadder.json';

/** How many releases to try before giving up. */
const MOST_TRIED = 10;

const log = (line: string) => console.log(`[newest] ${line}`);

/** The registry's n8n releases, newest first. */
async function releases(env: NodeJS.ProcessEnv): Promise<string[]> {
	const versions = JSON.parse(await captureOutput('npm', ['view', 'n8n', 'versions', '--json'], os.tmpdir(), env)) as string[];
	return versions.filter((version) => valid(version) && !prerelease(version)).sort(rcompare);
}

/** Why n8n `version` does not install from the registry (npm's error lines), or undefined when its tree resolves. */
export async function whyNotInstallable(version: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
	const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'n8n-resolve-'));
	try {
		const manifest = { name: 'n8n-resolve-check', private: true, dependencies: { n8n: version }, overrides: overridesFor(version) };
		await fs.writeFile(path.join(dir, 'package.json'), JSON.stringify(manifest));
		const flags = ['--dry-run', '--ignore-scripts=true', '--package-lock=false', '--no-audit', '--no-fund', '--no-update-notifier', '--global=false'];
		await captureOutput('npm', ['install', ...flags], dir, env);
		return undefined;
	} catch (error) {
		const npmErrors = (error as Error).message.split('\n').filter((line) => /^npm error (code |notarget No |404 )/.test(line));
		return npmErrors.length > 0 ? npmErrors.join('; ') : (error as Error).message;
	} finally {
		await fs.rm(dir, { recursive: true, force: true });
	}
}

async function main(): Promise<void> {
	const env = withoutNpmVariables(process.env);
	const ladderTop = ladder[ladder.length - 1];
	for (const version of (await releases(env)).slice(0, MOST_TRIED)) {
		log(`n8n ${version}: resolving its dependency tree`);
		const problem = await whyNotInstallable(version, env);
		if (problem) {
			log(`n8n ${version} does not install: ${problem}`);
			continue;
		}
		log(`newest installable n8n: ${version}`);
		log(ladderTop === version ? `compatLadder.json: its newest rung is ${version}` : `compatLadder.json: its newest rung is ${ladderTop}, not ${version}${ladder.includes(version) ? '' : ` (${version} is not on the ladder)`}`);
		process.exitCode = ladderTop === version ? 0 : 1;
		return;
	}
	log(`none of the newest ${MOST_TRIED} releases of n8n installs from the registry`);
	process.exitCode = 1;
}

if (require.main === module) void main();
