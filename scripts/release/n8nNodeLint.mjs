// Runs n8n's own package check, `n8n-node lint` from @n8n/node-cli, unchanged and in strict mode,
// on what this package ships: package.json, credentials/, nodes/ and icons/, beside the tool's
// default eslint.config.mjs taken verbatim from the installed tool.
//
// Why a copy: the tool lints every .ts file under the folder it runs in with the node rules
// (no timers, no `process`, no console), and in strict mode it refuses any eslint.config.mjs
// other than its own. This repository also holds the sandbox, the tests, the scripts and the
// benchmarks in TypeScript, which need exactly those globals and never ship. Our own
// eslint.config.mjs (`npm run lint`) applies n8n's scanner rules to the shipped files and to
// dist/, which the tool's config ignores.
//
// Offline: npm is told not to reach the registry, so a missing local eslint fails instead of
// being downloaded.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const toolDir = path.join(repoRoot, 'node_modules', '@n8n', 'node-cli');
const toolConfig = path.join(toolDir, 'dist', 'template', 'templates', 'shared', 'default', 'eslint.config.mjs');
const SHIPPED = ['package.json', 'tsconfig.json', 'credentials', 'nodes', 'icons'];

const stage = mkdtempSync(path.join(os.tmpdir(), 'n8n-node-lint-'));
let status = 1;
try {
	for (const entry of SHIPPED) cpSync(path.join(repoRoot, entry), path.join(stage, entry), { recursive: true });
	writeFileSync(path.join(stage, 'eslint.config.mjs'), readFileSync(toolConfig));
	symlinkSync(path.join(repoRoot, 'node_modules'), path.join(stage, 'node_modules'), 'dir');

	const { version } = JSON.parse(readFileSync(path.join(toolDir, 'package.json'), 'utf8'));
	const strict = JSON.parse(readFileSync(path.join(stage, 'package.json'), 'utf8')).n8n?.strict === true;
	console.log(`n8n-node lint (@n8n/node-cli ${version}, strict mode ${strict ? 'on' : 'OFF'}) on ${SHIPPED.join(', ')}`);
	const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
	const result = spawnSync(path.join(repoRoot, 'node_modules', '.bin', 'n8n-node'), ['lint'], {
		cwd: stage,
		stdio: 'inherit',
		env: { ...env, npm_config_offline: 'true', npm_config_update_notifier: 'false', CI: 'true' },
	});
	status = result.status ?? 1;
	// Strict mode is what makes the tool check its own config; without it the check would be weaker.
	if (status === 0 && !strict) {
		console.error('package.json must keep "n8n": { "strict": true }');
		status = 1;
	}
	if (status === 0) console.log('n8n-node lint: no problems');
} finally {
	rmSync(stage, { recursive: true, force: true });
}
process.exit(status);
