/**
 * `node stopWithParent.js <parentPid> <watchedPath> <file> [args…]`, started detached: while
 * `watchedPath` exists (a server's pid file), runs `file args` once the process `parentPid` is gone,
 * so a server the tests started in a session of its own (Postgres) or as a plain child (Redis) does
 * not outlive a test process that was killed.
 */
const { execFileSync } = require('node:child_process');
const { existsSync } = require('node:fs');

const [parentPid, watchedPath, file, ...args] = process.argv.slice(2);
const timer = setInterval(() => {
	if (!existsSync(watchedPath)) return clearInterval(timer);
	try {
		process.kill(Number(parentPid), 0);
	} catch {
		clearInterval(timer);
		try {
			execFileSync(file, args, { stdio: 'ignore', timeout: 30_000 });
		} catch {
			// The server went by itself meanwhile.
		}
	}
}, 2_000);
