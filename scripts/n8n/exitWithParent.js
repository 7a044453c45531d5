/**
 * Loaded into every n8n the harness starts (`node --require`): n8n exits when the test process that
 * started it is gone, also when that one was killed (SIGKILL leaves no chance to stop n8n).
 */
const parentPid = Number(process.env.AGENCY_INBOX_PARENT_PID);
if (parentPid > 0) {
	setInterval(() => {
		try {
			process.kill(parentPid, 0);
		} catch {
			process.kill(process.pid, 'SIGKILL');
		}
	}, 2_000).unref();
}
