/**
 * Stops what a script started, once, newest first, then exits: when the script is done or fails,
 * and on SIGINT, SIGTERM or SIGHUP (Ctrl-C, kill, a closed terminal) or when its parent dies. Not everything would die with
 * the script: pg_ctl starts Postgres in its own session, and Redis outlives its parent.
 * Temp dirs of scripts/tempDirs.js are removed after the stops, when the process exits.
 */
export interface StopOnExit {
	/** Something that runs now. */
	add(stop: () => Promise<void>): void;
	/**
	 * Something still starting, returned as is: a stop asked for meanwhile waits for it, then stops
	 * it (a start that fails is expected to stop what it had started itself).
	 */
	whenStarted<T>(starting: Promise<T>, stop: (started: T) => Promise<void>): Promise<T>;
	/** Runs every stop (one that fails is reported, the others still run), then exits with `code`. */
	exit(code: number): Promise<never>;
}

export function stopOnExit(log: (line: string) => void): StopOnExit {
	const stops: Array<() => Promise<void>> = [];
	let exiting: Promise<never> | undefined;
	const exit = (code: number) =>
		(exiting ??= (async () => {
			log('stopping everything this started ...');
			for (const stop of [...stops].reverse()) await stop().catch((error: Error) => log(`while stopping: ${error.message}`));
			log('stopped');
			process.exit(code);
		})());
	// Stopping on a signal is how people end these scripts: not a failure.
	for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void exit(0));
	// npm passes a SIGTERM only to the shell it runs a script in, which dies without passing it on:
	// a parent that goes away counts as that signal.
	const parent = process.ppid;
	setInterval(() => process.ppid !== parent && void exit(0), 1_000).unref();
	return {
		add: (stop) => void stops.push(stop),
		whenStarted: (starting, stop) => {
			stops.push(() => starting.then(stop, () => undefined));
			return starting;
		},
		exit,
	};
}
