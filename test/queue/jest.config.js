/**
 * Queue-mode tests in a real n8n (`npm run test:queue`): Postgres, Redis, a main, workers and
 * webhook processes started once per file, files side by side (test/helpers/n8nJest.js).
 */
const { n8nProject, n8nRun } = require('../helpers/n8nJest');

module.exports = n8nRun([n8nProject('queue')]);
