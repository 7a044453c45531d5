/**
 * End-to-end tests in a real n8n (`npm run test:e2e`): each file its own n8n, files side by side
 * (test/helpers/n8nJest.js).
 */
const { n8nProject, n8nRun } = require('../helpers/n8nJest');

module.exports = n8nRun([n8nProject('e2e')]);
