/**
 * Orders the real-n8n test files longest first by their time budget (test/budgets.json), so that
 * running side by side the long ones start at once and the short ones fill the gaps; a file without
 * a budget starts first (it may be long). Every run, also on a clean clone, starts them in this order.
 */
const path = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;
const { budgetOf } = require('./budgets');

class BudgetSequencer extends Sequencer {
	sort(tests) {
		const budget = (test) => budgetOf(path.relative(test.context.config.rootDir, test.path)) ?? Infinity;
		return [...tests].sort((a, b) => budget(b) - budget(a) || a.path.localeCompare(b.path));
	}
}

module.exports = BudgetSequencer;
