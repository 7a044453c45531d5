/**
 * The tarballs the community-install test publishes to its registry: the last release, rebuilt from
 * its commit, and the build under test, packed as the next version would be.
 */
import { execFile } from 'node:child_process';
import { promises as fs, symlinkSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import semverInc from 'semver/functions/inc';

import { REPO_ROOT } from '../../scripts/n8n/agencyInbox';
import { withoutNpmVariables } from '../../scripts/n8n/install';

const run = promisify(execFile);
const BIG_OUTPUT = { maxBuffer: 64 * 1024 * 1024 };

/**
 * 0.1.0, the last release: the commit that wrote its CHANGELOG entry (the tree it describes: three
 * nodes, three samples), from which test/compat/0.1.0/ was saved.
 */
export const PREVIOUS_RELEASE = { version: '0.1.0', commit: '36d9b4d60e5f9d5edef62374f96215742ddb93c3' } as const;

async function npmPack(packageDir: string, destination: string): Promise<string> {
	const { stdout } = await run('npm', ['pack', packageDir, '--json', '--ignore-scripts=true', `--pack-destination=${destination}`], { cwd: destination, env: withoutNpmVariables(process.env), ...BIG_OUTPUT });
	const [{ filename }] = JSON.parse(stdout) as Array<{ filename: string }>;
	return path.join(destination, filename);
}

/**
 * The release `commit`, built as it was built then (its own build script: tsc and gulp, with this
 * checkout's dev dependencies, which it shares) and packed. Needs the git history.
 */
export async function packRelease(release: { version: string; commit: string }, workDir: string): Promise<string> {
	const sourceDir = path.join(workDir, `source-${release.version}`);
	await fs.mkdir(sourceDir, { recursive: true });
	const { stdout: archive } = await run('git', ['archive', '--format=tar', release.commit], { cwd: REPO_ROOT, encoding: 'buffer', ...BIG_OUTPUT }).catch((error) => {
		throw new Error(`git has no commit ${release.commit} (release ${release.version}): the test needs the repository's history (${error.message})`);
	});
	await fs.writeFile(path.join(workDir, 'release.tar'), archive);
	await run('tar', ['-xf', path.join(workDir, 'release.tar'), '-C', sourceDir]);
	symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(sourceDir, 'node_modules'), 'dir');
	const manifest = JSON.parse(await fs.readFile(path.join(sourceDir, 'package.json'), 'utf8')) as { version: string };
	if (manifest.version !== release.version) throw new Error(`commit ${release.commit} is version ${manifest.version}, not ${release.version}`);
	await run('npm', ['run', 'build', '--silent'], { cwd: sourceDir, env: withoutNpmVariables(process.env), ...BIG_OUTPUT });
	return npmPack(sourceDir, workDir);
}

/**
 * The build in the repository (`npm run build` first), packed as the next version: package.json's
 * version (the last release) with a pre-release `next.0` of the following patch, e.g. 0.1.1-next.0.
 */
export async function packNextVersion(workDir: string): Promise<{ file: string; version: string }> {
	// Its own folder: packed, it has the last release's file name.
	const unpackDir = path.join(workDir, 'next');
	await fs.mkdir(unpackDir, { recursive: true });
	const packed = await npmPack(REPO_ROOT, unpackDir);
	await run('tar', ['-xzf', packed, '-C', unpackDir]);
	const manifestFile = path.join(unpackDir, 'package', 'package.json');
	const manifest = JSON.parse(await fs.readFile(manifestFile, 'utf8')) as { version: string };
	const version = semverInc(manifest.version, 'prerelease', 'next')!;
	await fs.writeFile(manifestFile, JSON.stringify({ ...manifest, version }, null, 2) + '\n');
	const file = path.join(workDir, `n8n-nodes-agency-inbox-${version}.tgz`);
	await run('tar', ['-czf', file, '-C', unpackDir, 'package']);
	return { file, version };
}
