/**
 * A lock between processes on one machine: a file holding its holder's pid, created exclusively.
 * A lock whose holder is gone (killed outright) is taken over.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';

/**
 * Waits until `lockFile` can be created, then holds it; returns the release. `onWait` is called once
 * with the holder's pid when another process holds it.
 */
export async function acquireFileLock(lockFile: string, onWait: (holder: number | 'starting') => void): Promise<() => Promise<void>> {
	await fs.mkdir(path.dirname(lockFile), { recursive: true });
	let waitingAnnounced = false;
	for (;;) {
		try {
			await fs.writeFile(lockFile, String(process.pid), { flag: 'wx' });
			return () => fs.rm(lockFile, { force: true });
		} catch (error) {
			if (error.code !== 'EEXIST') throw error;
		}
		const holder = await readLockHolder(lockFile);
		if (holder === undefined) continue;
		if (holder !== 'starting' && !isProcessAlive(holder)) {
			await fs.rm(lockFile, { force: true });
			continue;
		}
		if (!waitingAnnounced) {
			onWait(holder);
			waitingAnnounced = true;
		}
		await new Promise((resolve) => setTimeout(resolve, 1000));
	}
}

/** The pid in a lock file; 'starting' while it is still being written; undefined once it is gone. */
async function readLockHolder(lockFile: string): Promise<number | 'starting' | undefined> {
	try {
		const [content, stats] = await Promise.all([fs.readFile(lockFile, 'utf8'), fs.stat(lockFile)]);
		if (content) return Number(content);
		// An empty lock is a writer between create and write, unless it has been empty for long.
		return Date.now() - stats.mtimeMs < 10_000 ? 'starting' : 0;
	} catch (error) {
		if (error.code === 'ENOENT') return undefined;
		throw error;
	}
}

function isProcessAlive(pid: number): boolean {
	if (pid <= 0) return false;
	try {
		process.kill(pid, 0);
		return true;
	} catch (error) {
		return error.code === 'EPERM';
	}
}
