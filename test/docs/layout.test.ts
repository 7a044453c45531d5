/**
 * The map of the code is current: the Layout of docs/development.md names every folder and module under
 * nodes/, and nothing that is gone. A module added without a line there fails this test until it has one.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');

/** The code block under "## Layout". */
function layoutBlock(markdown: string): string[] {
	const section = markdown.split(/^## Layout$/m)[1] ?? '';
	const block = /```\n([\s\S]*?)```/.exec(section);
	if (!block) throw new Error('docs/development.md has no code block under "## Layout"');
	return block[1].split('\n');
}

/**
 * The folders (ending in /) and .ts modules a layout names. A line's names come before the first run of
 * two or more spaces; a folder line names its path from the repository's root when it starts the line,
 * else its path below the folder above it that is indented less; names after a folder, or on a line of
 * their own, are modules in it. Lines indented as deep as the descriptions only continue one.
 */
function namedInLayout(lines: string[]): string[] {
	const named: string[] = [];
	const folders: Array<{ indent: number; path: string }> = [];
	for (const line of lines) {
		const indent = line.length - line.trimStart().length;
		if (line.trim() === '' || indent >= 24) continue;
		const names = line.trimStart().split(/ {2,}/)[0].split(/[\s,]+/).filter(Boolean);
		while (folders.length > 0 && folders[folders.length - 1].indent >= indent) folders.pop();
		let folder = folders[folders.length - 1]?.path ?? '';
		for (const name of names) {
			if (name.endsWith('/')) {
				folder = `${folder}${name}`;
				named.push(folder);
				folders.push({ indent, path: folder });
			} else if (name.endsWith('.ts')) named.push(`${folder}${name}`);
		}
	}
	return named;
}

/** Every folder (with a trailing /) and .ts module under `dir`, as paths from the repository's root. */
function modulesUnder(dir: string): string[] {
	const found: string[] = [];
	for (const name of readdirSync(path.join(ROOT, dir)).sort()) {
		const relative = `${dir}${name}`;
		if (statSync(path.join(ROOT, relative)).isDirectory()) found.push(`${relative}/`, ...modulesUnder(`${relative}/`));
		else if (name.endsWith('.ts')) found.push(relative);
	}
	return found;
}

describe('the Layout of docs/development.md', () => {
	const named = namedInLayout(layoutBlock(readFileSync(path.join(ROOT, 'docs', 'development.md'), 'utf8'))).filter((name) => name.startsWith('nodes/'));

	it('reads folders, modules after a folder and modules on lines of their own', () => {
		const layout = ['nodes/a/                 first', '  x.ts                   x', '                         more about x', '  b/ y.ts, z.ts', '    w.ts  w', 'other/  o'];
		expect(namedInLayout(layout)).toEqual(['nodes/a/', 'nodes/a/x.ts', 'nodes/a/b/', 'nodes/a/b/y.ts', 'nodes/a/b/z.ts', 'nodes/a/b/w.ts', 'other/']);
	});

	it('names every folder and module under nodes/', () => {
		const missing = modulesUnder('nodes/').filter((module) => !named.includes(module));
		expect(missing).toEqual([]);
	});

	it('names nothing under nodes/ that is not there', () => {
		const modules = new Set(modulesUnder('nodes/'));
		expect(named.filter((name) => !modules.has(name))).toEqual([]);
	});
});
