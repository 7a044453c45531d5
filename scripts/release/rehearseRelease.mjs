// Rehearses `npm run release` (release-it with .release-it.json) without publishing and without the
// network: the committed HEAD is pushed as `main` into a temporary bare repository that stands in
// for the GitHub remote, a clone of it gets one release note under "Unreleased", then
//   1. `release-it --dry-run` must pass every check (branch, clean tree, upstream) and change nothing;
//   2. a real `release-it` must bump package.json and the lock, move the note under the new version
//      in CHANGELOG.md, commit, tag v<version> and push both to the stand-in remote, and the tag
//      must pass the publish workflow's tag check.
// Everything lives in one temporary folder, removed at the end, also on failure or Ctrl-C.
//   node scripts/release/rehearseRelease.mjs [increment]    (default: patch)
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const increment = process.argv[2] ?? 'patch';
const NOTE = '- Release rehearsal note (written by scripts/release/rehearseRelease.mjs).';
const startedAt = Date.now();

const workDir = mkdtempSync(path.join(os.tmpdir(), 'agency-inbox-release-'));
const cleanUp = () => rmSync(workDir, { recursive: true, force: true });
for (const signal of ['SIGINT', 'SIGTERM']) {
	process.once(signal, () => {
		cleanUp();
		process.exit(1);
	});
}

const origin = path.join(workDir, 'origin.git');
const clone = path.join(workDir, 'clone');
// No npm_* variables from `npm run`, no prompts, and a fixed identity for the release commit.
const env = {
	...Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(npm_|GIT_)/i.test(name))),
	CI: 'true',
	GIT_TERMINAL_PROMPT: '0',
	GIT_AUTHOR_NAME: 'Release Rehearsal',
	GIT_AUTHOR_EMAIL: 'rehearsal@agency-inbox.invalid',
	GIT_COMMITTER_NAME: 'Release Rehearsal',
	GIT_COMMITTER_EMAIL: 'rehearsal@agency-inbox.invalid',
};

function run(command, args, cwd, { allowFailure = false } = {}) {
	const result = spawnSync(command, args, { cwd, env, encoding: 'utf8' });
	const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
	if (result.status !== 0 && !allowFailure) {
		throw new Error(`${command} ${args.join(' ')} failed (exit ${result.status}):\n${output}`);
	}
	return { status: result.status, output };
}
const git = (args, cwd = clone) => run('git', args, cwd).output.trim();
const readJson = (file) => JSON.parse(readFileSync(path.join(clone, file), 'utf8'));
const releaseIt = path.join(repoRoot, 'node_modules', '.bin', 'release-it');

function check(condition, message) {
	if (!condition) throw new Error(`release rehearsal: ${message}`);
}

try {
	// The stand-in remote: the committed HEAD as main, with the repository's tags.
	git(['init', '--quiet', '--bare', origin], workDir);
	git(['symbolic-ref', 'HEAD', 'refs/heads/main'], origin);
	git(['push', '--quiet', origin, 'HEAD:refs/heads/main', '+refs/tags/*:refs/tags/*'], repoRoot);
	git(['clone', '--quiet', origin, clone], workDir);
	symlinkSync(path.join(repoRoot, 'node_modules'), path.join(clone, 'node_modules'), 'dir');
	// A symlink is not the directory that .gitignore's `node_modules/` names.
	appendFileSync(path.join(clone, '.git', 'info', 'exclude'), '/node_modules\n');

	const before = readJson('package.json').version;
	const previousTag = `v${before}`;
	// Before the first release is tagged, the rehearsal starts as if it had been.
	if (!git(['tag', '--list', previousTag])) {
		git(['tag', '--annotate', previousTag, '--message', `Release ${before}`]);
		git(['push', '--quiet', 'origin', previousTag]);
	}

	// A maintainer's release note, committed before releasing.
	const changelog = readFileSync(path.join(clone, 'CHANGELOG.md'), 'utf8');
	check(changelog.includes('## [Unreleased]\n'), 'CHANGELOG.md has no "## [Unreleased]" section');
	writeFileSync(path.join(clone, 'CHANGELOG.md'), changelog.replace('## [Unreleased]\n', `## [Unreleased]\n\n### Changed\n\n${NOTE}\n`));
	git(['commit', '--quiet', '--all', '--message', 'Release note for the rehearsal']);
	const noteCommit = git(['rev-parse', 'HEAD']);

	// 1. The dry run: every check passes and nothing changes.
	const dryRun = run(releaseIt, [increment, '--ci', '--dry-run'], clone, { allowFailure: true });
	check(dryRun.status === 0, `release-it --dry-run failed (exit ${dryRun.status}):\n${dryRun.output}`);
	check(git(['rev-parse', 'HEAD']) === noteCommit && git(['status', '--porcelain']) === '', `the dry run changed the clone:\n${git(['status', '--porcelain'])}`);
	// release-it announces "Let's release <name> (<from>...<to>)".
	const [, from, after] = /\((\d+\.\d+\.\d+)\.\.\.(\d+\.\d+\.\d+)\)/.exec(dryRun.output) ?? [];
	check(from === before && after && after !== before, `the dry run names no new version after ${before}:\n${dryRun.output}`);
	console.log(`dry run: ${before} -> ${after}, every check passed, nothing written`);

	// 2. The release itself, pushed to the stand-in remote.
	const release = run(releaseIt, [increment, '--ci'], clone, { allowFailure: true });
	check(release.status === 0, `release-it failed (exit ${release.status}):\n${release.output}`);
	const tag = `v${after}`;
	check(readJson('package.json').version === after, `package.json was not bumped to ${after}`);
	const lock = readJson('package-lock.json');
	check(lock.version === after && lock.packages[''].version === after, `package-lock.json was not bumped to ${after}`);
	const released = readFileSync(path.join(clone, 'CHANGELOG.md'), 'utf8');
	// Everything that stood under Unreleased (the note and any entries already there) moves under the new version.
	const section = new RegExp(`## \\[Unreleased\\]\\s*## \\[${after.replace(/\./g, '\\.')}\\] - \\d{4}-\\d{2}-\\d{2}\\s*### Changed\\s*${NOTE.replace(/[.()/]/g, '\\$&')}[^]*?## \\[${before.replace(/\./g, '\\.')}\\]`);
	check(section.test(released), `CHANGELOG.md does not have the note under ${after} below an empty Unreleased:\n${released.slice(0, 1500)}`);
	check(released.includes(`[Unreleased]: https://github.com/agency-inbox/n8n-nodes-agency-inbox/compare/${tag}...HEAD`), 'the Unreleased link was not moved on');
	check(released.includes(`[${after}]: https://github.com/agency-inbox/n8n-nodes-agency-inbox/compare/${previousTag}...${tag}`), `no link for ${after}`);
	const head = git(['rev-parse', 'HEAD']);
	check(git(['log', '-1', '--format=%s']) === `Release ${after}`, 'the release commit is not "Release <version>"');
	check(git(['rev-parse', `refs/tags/${tag}^{commit}`], origin) === head, `${tag} was not pushed to the remote at the release commit`);
	check(git(['rev-parse', 'refs/heads/main'], origin) === head, 'main was not pushed to the remote');
	check(git(['status', '--porcelain']) === '', 'the release left uncommitted changes');

	// The tag passes the publish workflow's check; the previous tag does not.
	git(['checkout', '--quiet', tag]);
	const checkTag = path.join(repoRoot, 'scripts', 'release', 'checkTagVersion.mjs');
	run(process.execPath, [checkTag, tag], clone);
	check(run(process.execPath, [checkTag, previousTag], clone, { allowFailure: true }).status !== 0, 'the tag check accepted a tag that does not match');
	console.log(`release: ${tag} committed, tagged and pushed; CHANGELOG.md, package.json and the lock bumped (${((Date.now() - startedAt) / 1000).toFixed(1)} s)`);
} catch (error) {
	console.error(error.message);
	process.exitCode = 1;
} finally {
	cleanUp();
}
