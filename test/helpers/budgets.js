/**
 * The time budgets of the real-n8n test files (test/budgets.json, documented in docs/development.md):
 * the wall time a file may take in `.ci/run` on 2 cores, beside the figure measured when it was set.
 */
const budgets = require('../budgets.json');

/** `{ seconds, measured }` of a file path relative to the repository, or undefined. */
function budgetOf(file) {
	return budgets.files[file.split(require('node:path').sep).join('/')];
}

module.exports = { budgets, budgetOf };
