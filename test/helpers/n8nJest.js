/**
 * What the jest configs of the real-n8n suites share (test/e2e, test/queue, test/browser, and
 * test/n8n.jest.config.js that runs them all). Each test file starts its own n8n (and sandbox,
 * Postgres, Chromium) on free ports in its own throwaway folders, so files run side by side; most of
 * their time is waiting on poll intervals, request budgets and n8n's starts.
 */
const path = require('node:path');
const { makeTempDir } = require('../../scripts/tempDirs');

const repoRoot = path.resolve(__dirname, '..', '..');

/**
 * How many test files run at once (jest workers): AGENCY_INBOX_N8N_FILES_AT_ONCE, else 4, measured
 * on 2 cores (docs/development.md, "Time budgets"): more files at once, and n8n's starts and polls
 * compete for the CPU until waits stretch.
 */
const FILES_AT_ONCE = Number(process.env.AGENCY_INBOX_N8N_FILES_AT_ONCE || 4);

/** The test files of `test/<suite>/` as a jest project. */
function n8nProject(suite, options = {}) {
	return {
		displayName: suite,
		rootDir: repoRoot,
		roots: [`<rootDir>/test/${suite}`],
		testMatch: ['**/*.test.ts'],
		testEnvironment: '<rootDir>/test/helpers/costedEnvironment.js',
		// Only transpiled: `npm run typecheck` checks the types, and ts-jest's checking costs every worker CPU.
		transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: { isolatedModules: true } }] },
		slowTestThreshold: 60,
		// What a test started ends with it, also when it timed out (test/helpers/testScope.ts).
		setupFilesAfterEnv: ['<rootDir>/test/helpers/endOfTest.ts'],
		...options,
	};
}

/** A jest run of real-n8n projects: files side by side, longest budget first, what each cost printed at the end. */
function n8nRun(projects) {
	// Each file's cost (costedEnvironment.js) is appended here; .ci/run names its own file.
	process.env.AGENCY_INBOX_FILE_COSTS ??= path.join(makeTempDir('file-costs'), 'costs.jsonl');
	const [single] = projects;
	return {
		...(projects.length === 1 ? single : { rootDir: repoRoot, projects }),
		maxWorkers: FILES_AT_ONCE,
		// Long (a run-wide setting): a busy machine slows every step, and a test's waits allow for it
		// (EVENT_WAIT_MS in test/e2e/support.ts); a test that needs more says so. Time is watched by the
		// files' budgets (test/budgets.json), which warn.
		testTimeout: 15 * 60_000,
		testSequencer: '<rootDir>/test/helpers/budgetSequencer.js',
		reporters: ['default', '<rootDir>/test/helpers/totalsReporter.js', '<rootDir>/test/helpers/fileCostsReporter.js'],
		// A setup that timed out can still start n8n after its test failed: jest would wait for it. The
		// harness kills every n8n it started when the process exits, and the throwaway folders go too.
		forceExit: true,
	};
}

module.exports = { n8nProject, n8nRun };
