/**
 * End-to-end tests in a real n8n (`npm run test:e2e`): one n8n for the whole run, so in band, with
 * long timeouts (the first run on a machine installs n8n, several minutes).
 */
const path = require('node:path');

const repoRoot = path.resolve(__dirname, '..', '..');

module.exports = {
	rootDir: repoRoot,
	preset: 'ts-jest',
	testEnvironment: 'node',
	roots: ['<rootDir>/test/e2e'],
	testMatch: ['**/*.test.ts'],
	reporters: ['default', '<rootDir>/test/helpers/totalsReporter.js'],
	maxWorkers: 1,
	testTimeout: 180_000,
	// The install of n8n on a machine without a cached one happens in beforeAll.
	slowTestThreshold: 60,
};
