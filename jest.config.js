/**
 * Unit and engine-level tests. End-to-end tests in a real n8n run with `npm run test:e2e` and
 * `npm run test:queue`, the browser smoke test with `npm run test:browser`.
 */
module.exports = {
	preset: 'ts-jest',
	testEnvironment: 'node',
	roots: ['<rootDir>/test'],
	testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/e2e/', '<rootDir>/test/queue/', '<rootDir>/test/browser/'],
	reporters: ['default', '<rootDir>/test/helpers/totalsReporter.js'],
	// github-slugger (the docs link test) ships only ES modules; ts-jest turns it into CommonJS.
	transform: { '/node_modules/github-slugger/.+\\.js$': ['ts-jest', { tsconfig: { allowJs: true } }] },
	transformIgnorePatterns: ['/node_modules/(?!github-slugger/)'],
	// Generous: a test here is not about time, and a busy machine (installs beside it) stretches every
	// poll; test/budgets.json and the file costs are where time is watched, as warnings.
	testTimeout: 180_000,
	// What a test started ends with it, also when it timed out (test/helpers/testScope.ts).
	setupFilesAfterEnv: ['<rootDir>/test/helpers/endOfTest.ts'],
	globalSetup: '<rootDir>/test/helpers/n8nUserFolderSetup.js',
	globalTeardown: '<rootDir>/test/helpers/n8nUserFolderTeardown.js',
};
