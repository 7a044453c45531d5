/** scripts/tempDirs.js: throwaway folders do not outlive their process, even when it is killed. */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { makeTempDir, OWNER_FILE, removeAbandonedTempDirs, removeTempDir } from '../scripts/tempDirs';

const helper = path.join(__dirname, '../scripts/tempDirs.js');
const inChild = (code: string) => spawnSync(process.execPath, ['-e', `const t = require(${JSON.stringify(helper)}); ${code}`], { encoding: 'utf8' });

it('removes the folder when the process exits, also through process.exit and SIGINT', () => {
	for (const ending of ['', 'process.exit(3);', "process.kill(process.pid, 'SIGINT'); setTimeout(() => {}, 5000);"]) {
		const child = inChild(`console.log(t.makeTempDir('test-exit')); ${ending}`);
		const dir = child.stdout.trim();
		expect(dir).toContain(`${os.tmpdir()}${path.sep}agency-inbox-test-exit-`);
		expect(fs.existsSync(dir)).toBe(false);
	}
});

it('removes folders of a process that was killed outright, and leaves live ones and others alone', () => {
	const mine = makeTempDir('test-live');
	const killed = inChild(`console.log(t.makeTempDir('test-killed')); process.kill(process.pid, 'SIGKILL');`).stdout.trim();
	expect(fs.existsSync(killed)).toBe(true);
	const foreign = fs.mkdtempSync(path.join(os.tmpdir(), 'agency-inbox-test-foreign-'));
	try {
		expect(removeAbandonedTempDirs()).toContain(killed);
		expect(fs.existsSync(killed)).toBe(false);
		expect(fs.existsSync(path.join(mine, OWNER_FILE))).toBe(true);
		expect(fs.existsSync(foreign)).toBe(true);
	} finally {
		removeTempDir(mine);
		fs.rmSync(foreign, { recursive: true, force: true });
	}
	expect(fs.existsSync(mine)).toBe(false);
});

it('removes a folder that a child of a killed process wrote again after its removal (no owner file left)', () => {
	const killed = inChild(`const dir = t.makeTempDir('test-rewritten'); console.log(dir); process.kill(process.pid, 'SIGKILL');`).stdout.trim();
	// What an n8n still starting does after its owner's folder went: it makes its database folder anew.
	fs.rmSync(killed, { recursive: true, force: true });
	fs.mkdirSync(path.join(killed, 'user', '.n8n'), { recursive: true });
	expect(removeAbandonedTempDirs()).toContain(killed);
	expect(fs.existsSync(killed)).toBe(false);
});
