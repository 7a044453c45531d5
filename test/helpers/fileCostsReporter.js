/**
 * Prints, when a real-n8n run ends, what each test file cost (wall and CPU seconds, from
 * costedEnvironment.js) beside its budget (test/budgets.json), and per suite. A file over its budget
 * is named, never failed: timings on a shared machine are noisy.
 */
const { existsSync, readFileSync } = require('node:fs');
const { budgetOf } = require('./budgets');

/** The costs recorded in `file`, one per test file run. */
function readCosts(file) {
	if (!file || !existsSync(file)) return [];
	return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
}

const suiteOf = (file) => file.split('/')[1];

/** Lines of a table: per file (longest first), per suite, and the files over their budget. */
function costLines(costs) {
	const rows = [...costs].sort((a, b) => b.wallSeconds - a.wallSeconds);
	const lines = ['wall s   CPU s  budget s  file'];
	for (const { file, wallSeconds, cpuSeconds } of rows) {
		const budget = budgetOf(file);
		const over = budget === undefined ? '  (no budget)' : wallSeconds > budget ? '  OVER BUDGET' : '';
		lines.push(`${String(wallSeconds).padStart(6)}  ${String(cpuSeconds ?? '?').padStart(6)}  ${String(budget ?? '-').padStart(8)}  ${file}${over}`);
	}
	const suites = [...new Set(rows.map((row) => suiteOf(row.file)))].sort();
	for (const suite of suites) {
		const ofSuite = rows.filter((row) => suiteOf(row.file) === suite);
		const sum = (key) => ofSuite.reduce((total, row) => total + (row[key] ?? 0), 0);
		const budget = ofSuite.reduce((total, row) => total + (budgetOf(row.file) ?? 0), 0);
		lines.push(`suite ${suite}: ${ofSuite.length} file(s), ${sum('wallSeconds')} s of wall time (budget ${budget} s), ${sum('cpuSeconds')} CPU s`);
	}
	return lines;
}

class FileCostsReporter {
	onRunComplete() {
		const costs = readCosts(process.env.AGENCY_INBOX_FILE_COSTS);
		if (costs.length) process.stderr.write(`\nTime per test file (side by side, so wall times overlap):\n${costLines(costs).join('\n')}\n`);
	}
}

module.exports = FileCostsReporter;
module.exports.costLines = costLines;
module.exports.readCosts = readCosts;
