/**
 * jest's node environment that records what each real-n8n test file cost: its wall time and the CPU
 * seconds of its jest process and of every process it started and waited for (n8n, its task runner,
 * Redis, Chromium; not Postgres, which runs in its own session). One JSON line per file is appended
 * to the file named by AGENCY_INBOX_FILE_COSTS (set by test/n8n.jest.config.js); the costs reporter
 * prints them when the run ends.
 */
const { appendFileSync, readFileSync } = require('node:fs');
const path = require('node:path');
const { TestEnvironment } = require('jest-environment-node');

/** CPU seconds of this process and its reaped children, from /proc (Linux); undefined elsewhere. */
function cpuSeconds() {
	try {
		// Fields after the command name: utime, stime, cutime, cstime are the 12th to 15th.
		const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
		return fields.slice(11, 15).reduce((sum, ticks) => sum + Number(ticks), 0) / 100;
	} catch {
		return undefined;
	}
}

class CostedEnvironment extends TestEnvironment {
	constructor(config, context) {
		super(config, context);
		this.testPath = context.testPath;
		this.rootDir = config.projectConfig.rootDir;
	}

	async handleTestEvent(event) {
		if (event.name === 'run_start') {
			this.startedAt = Date.now();
			this.cpuAtStart = cpuSeconds();
		}
		if (event.name === 'run_finish' && process.env.AGENCY_INBOX_FILE_COSTS) {
			const cpu = cpuSeconds();
			const cost = {
				file: path.relative(this.rootDir, this.testPath),
				wallSeconds: Math.round((Date.now() - this.startedAt) / 1000),
				cpuSeconds: cpu === undefined ? undefined : Math.round(cpu - this.cpuAtStart),
			};
			appendFileSync(process.env.AGENCY_INBOX_FILE_COSTS, `${JSON.stringify(cost)}\n`);
		}
	}
}

module.exports = CostedEnvironment;
