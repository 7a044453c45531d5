/** Unit and engine-level tests. End-to-end tests in a real n8n run with `npm run test:e2e`. */
module.exports = {
	preset: 'ts-jest',
	testEnvironment: 'node',
	roots: ['<rootDir>/test'],
	testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/e2e/'],
	transform: { '^.+\\.ts$': ['ts-jest', {}] },
	testTimeout: 30_000,
};
