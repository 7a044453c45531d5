/**
 * The time budgets of the real-n8n test files (test/budgets.json, documented in docs/development.md,
 * "Time budgets"): the wall time in seconds a file may take in `.ci/run` on 2 cores.
 */
const budgets = require('../budgets.json');

/** The budget in seconds of a file path relative to the repository, or undefined. */
function budgetOf(file) {
	return budgets[file.split(require('node:path').sep).join('/')];
}

module.exports = { budgets, budgetOf };
