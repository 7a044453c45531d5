/**
 * The compatibility ladder, `npm run test:compat`: test/e2e/compat.test.ts and test/e2e/startFrom.test.ts
 * (side by side) in every n8n version of compatLadder.json (oldest first; the first is the floor the README promises), one jest run per
 * version, one after the other. `AGENCY_INBOX_N8N_VERSION=<version> npm run test:compat` runs one
 * version, of the ladder or not. A version not yet in the cache is installed by the test itself.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readInstallation } from './install';
import { REPO_ROOT } from './agencyInbox';
import ladder from './compatLadder.json';
import { stopOnExit } from '../stopOnExit';

/** What every version runs: the compat suite, and Start From's backfill across restarts (its pollers as that version has them). */
const COMPAT_FILES = ['test/e2e/compat.test.ts', 'test/e2e/startFrom.test.ts'];
const versions = process.env.AGENCY_INBOX_N8N_VERSION ? [process.env.AGENCY_INBOX_N8N_VERSION] : ladder;
const log = (line: string) => console.log(`[compat] ${line}`);
const stops = stopOnExit(log);
let current: ChildProcess | undefined;
// Ctrl-C for the running jest, so its afterAll stops n8n and the sandbox.
stops.add(async () => {
	if (!current || current.exitCode !== null) return;
	const exited = new Promise((resolve) => current!.once('exit', resolve));
	current.kill('SIGINT');
	await exited;
});

function runCompatSuite(version: string): Promise<boolean> {
	const jest = require.resolve('jest/bin/jest');
	current = spawn(process.execPath, [jest, '--config', 'test/e2e/jest.config.js', ...COMPAT_FILES], {
		cwd: REPO_ROOT,
		env: { ...process.env, AGENCY_INBOX_N8N_VERSION: version },
		stdio: 'inherit',
	});
	return new Promise((resolve) => current!.once('exit', (code) => resolve(code === 0)));
}

async function main(): Promise<void> {
	const results: string[] = [];
	let allPassed = true;
	for (const version of versions) {
		const cached = readInstallation(version) !== undefined;
		log(`n8n ${version}${cached ? '' : ' (not in the cache: installed first)'}`);
		const startedAt = Date.now();
		const passed = await runCompatSuite(version);
		allPassed &&= passed;
		results.push(`n8n ${version}: ${passed ? 'passed' : 'FAILED'} in ${Math.round((Date.now() - startedAt) / 1000)} s${cached ? '' : ', install included'}`);
	}
	for (const line of results) log(line);
	await stops.exit(allPassed ? 0 : 1);
}

void main();
