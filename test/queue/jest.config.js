/**
 * Queue-mode tests in a real n8n (`npm run test:queue`): Postgres, Redis, a main, workers and
 * webhook processes started once per file, so in band, with long timeouts.
 */
const base = require('../e2e/jest.config');

module.exports = { ...base, roots: ['<rootDir>/test/queue'] };
