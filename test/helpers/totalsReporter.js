/**
 * Appends this jest run's totals as `<passed> <failed>` to the file named by TEST_TOTALS_FILE, so
 * that .ci/run can print one plain closing line over several jest runs. Does nothing without it.
 */
const { appendFileSync } = require('node:fs');

class TotalsReporter {
	onRunComplete(_contexts, results) {
		const file = process.env.TEST_TOTALS_FILE;
		if (!file) return;
		// A suite that failed to load counts as one failure: its tests never ran.
		const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
		appendFileSync(file, `${results.numPassedTests} ${failed}\n`);
	}
}

module.exports = TotalsReporter;
