/**
 * Throwaway folders in TMPDIR (`agency-inbox-<name>-<pid>-XXXXXX`) that do not outlive their process:
 * removed when it exits (also through process.exit and on SIGINT, SIGTERM or SIGHUP), and, for a process
 * that was killed outright, by the next one that makes such a folder. The owner's pid stands in the
 * folder's name as well as in its owner file: a child that outlived its owner (an n8n still starting)
 * can write into a folder again after it was removed, and that folder has no owner file.
 * Plain CommonJS, so jest's globalSetup and the TypeScript scripts and tests share it.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const PREFIX = 'agency-inbox-';
const OWNER_FILE = '.agency-inbox-owner-pid';
const owned = new Set();
let hooked = false;

/**
 * Removes a folder whole. A process that has just stopped may still be writing into it (npm's cache
 * under a stopped n8n: ENOTEMPTY in a clean-clone run), so the removal tries again for up to 5 s.
 */
function removeFolder(dir) {
	fs.rmSync(dir, { recursive: true, force: true, maxRetries: 25, retryDelay: 200 });
}

function removeOwned() {
	for (const dir of owned) removeFolder(dir);
	owned.clear();
}

function onSignal(signal) {
	// Anyone else listening (npm start stops n8n and Postgres first, then exits) decides, and the exit
	// hook removes the folders after them: Postgres cannot be stopped once its folder is gone.
	if (process.listenerCount(signal) > 1) return;
	removeOwned();
	process.removeListener(signal, onSignal);
	process.kill(process.pid, signal);
}

function hookExit() {
	if (hooked) return;
	hooked = true;
	process.on('exit', removeOwned);
	for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, onSignal);
}

function isAlive(pid) {
	try {
		process.kill(pid, 0);
		return true;
	} catch (error) {
		return error.code === 'EPERM';
	}
}

/** The owner's pid: from the owner file, else from the folder's name; undefined for folders made by others. */
function ownerOf(dir) {
	try {
		return Number(fs.readFileSync(path.join(dir, OWNER_FILE), 'utf8'));
	} catch {
		const named = /-([0-9]+)-[A-Za-z0-9]{6}$/.exec(path.basename(dir));
		return named ? Number(named[1]) : undefined;
	}
}

/** Removes `agency-inbox-*` folders whose owning process is gone. Folders of unknown owner are left alone. */
function removeAbandonedTempDirs(root = os.tmpdir()) {
	let names = [];
	try {
		names = fs.readdirSync(root).filter((name) => name.startsWith(PREFIX));
	} catch {
		return [];
	}
	const removed = [];
	for (const name of names) {
		const dir = path.join(root, name);
		const pid = ownerOf(dir);
		if (!Number.isInteger(pid) || pid <= 0 || isAlive(pid)) continue;
		removeFolder(dir);
		removed.push(dir);
	}
	return removed;
}

/** A new folder `agency-inbox-<name>-<pid>-XXXXXX` in TMPDIR, removed when this process ends. */
function makeTempDir(name) {
	removeAbandonedTempDirs();
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${PREFIX}${name}-${process.pid}-`));
	fs.writeFileSync(path.join(dir, OWNER_FILE), String(process.pid));
	owned.add(dir);
	hookExit();
	return dir;
}

/** Removes a folder made by makeTempDir now (it would be removed at exit anyway). */
function removeTempDir(dir) {
	owned.delete(dir);
	removeFolder(dir);
}

module.exports = { makeTempDir, removeTempDir, removeAbandonedTempDirs, OWNER_FILE };
