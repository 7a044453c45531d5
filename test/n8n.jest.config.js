/**
 * Every real-n8n suite in one run, side by side (`npm run test:n8n`, what .ci/run runs): the
 * end-to-end, queue-mode and browser tests share one pool of jest workers, the files with the longest
 * budget first (test/budgets.json), so the short files fill the time the long ones wait.
 */
const { n8nProject, n8nRun } = require('./helpers/n8nJest');

module.exports = n8nRun(['e2e', 'queue', 'browser'].map((suite) => n8nProject(suite)));
