/**
 * Names of repository files written in code comments and in Markdown text, checked against the
 * repository, so a renamed, removed or never-added file leaves no pointer behind. Counted as a
 * reference, so that n8n's own files and placeholders are not:
 * - a Markdown file's name, with or without folders (`CHANGELOG.md`, `docs/sandbox.md`): some file
 *   of the repository must end with it;
 * - a path from a top-level folder of the repository (`nodes/shared/transport.ts`): that file;
 * - a path from the writing file's folder (`./docLinks.ts`, `../../README.md`): that file.
 * Bare names of other files (`transport.ts`, n8n's `live-webhooks.js`) and paths into other
 * repositories (`packages/cli/...`) are not checked. Markdown links are left to docLinks.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import * as ts from 'typescript';

import { REPO_ROOT, repositoryFiles } from './docLinks';

export interface FileReference {
	/** Where it is written: file and line. */
	source: string;
	/** The file name as written. */
	name: string;
	/** The file that writes it, repository-relative. */
	fromFile: string;
}

/** Paths below a top-level folder of ours that name other programs' files. */
const NOT_OUR_FILES = new Set([
	// n8n's list of installed community packages, in its user folder: `<user folder>/.n8n/nodes/package.json`.
	'nodes/package.json',
]);

const FILE_NAME = /(?<![\w./@<>-])((?:\.{1,2}\/)*[\w@-][\w@.-]*(?:\/[\w@.-]+)*\.(?:md|ts|js|mjs|cjs|json|sh|ya?ml|png|svg))(?![\w/-])/g;

const CODE = /\.(?:ts|js|mjs|cjs)$/;

/** The file names in one piece of text whose first line is `firstLine` of `fromFile`. */
function namesIn(text: string, fromFile: string, firstLine: number): FileReference[] {
	return text.split('\n').flatMap((line, index) =>
		[...line.matchAll(FILE_NAME)].map((match) => ({ source: `${fromFile}:${firstLine + index}`, name: match[1], fromFile })),
	);
}

/** Every comment of a TypeScript or JavaScript file, with its first line, as the compiler reads them. */
export function commentsOf(fileName: string, code: string): Array<{ text: string; line: number }> {
	const sourceFile = ts.createSourceFile(fileName, code, ts.ScriptTarget.Latest, true);
	const byStart = new Map<number, ts.CommentRange>();
	const visit = (node: ts.Node) => {
		for (const range of ts.getLeadingCommentRanges(code, node.getFullStart()) ?? []) byStart.set(range.pos, range);
		for (const range of ts.getTrailingCommentRanges(code, node.getEnd()) ?? []) byStart.set(range.pos, range);
		node.getChildren(sourceFile).forEach(visit);
	};
	visit(sourceFile);
	return [...byStart.values()]
		.sort((a, b) => a.pos - b.pos)
		.map((range) => ({ text: code.slice(range.pos, range.end), line: sourceFile.getLineAndCharacterOfPosition(range.pos).line + 1 }));
}

const withoutLinkTargets = (markdown: string) => markdown.replace(/\]\([^)]*\)/g, ']');

/** The file names in the comments of a code file, or in the text of a Markdown file (link targets left out). */
export function fileReferencesIn(fromFile: string, content: string): FileReference[] {
	if (fromFile.endsWith('.md')) return namesIn(withoutLinkTargets(content), fromFile, 1);
	return commentsOf(fromFile, content).flatMap((comment) => namesIn(comment.text, fromFile, comment.line));
}

/**
 * Whether a reference names a file missing from `files` (repository-relative paths); undefined when
 * it is not a reference this check reads.
 */
export function missingFrom(files: string[]): (reference: FileReference) => boolean | undefined {
	const known = new Set(files);
	const topLevelFolders = new Set(files.filter((file) => file.includes('/')).map((file) => file.split('/')[0]));
	return ({ name, fromFile }) => {
		if (name.startsWith('./') || name.startsWith('../')) return !known.has(path.posix.join(path.posix.dirname(fromFile), name));
		if (name.endsWith('.md')) return !files.some((file) => file === name || file.endsWith(`/${name}`));
		if (topLevelFolders.has(name.split('/')[0]) && name.includes('/') && !NOT_OUR_FILES.has(name)) return !known.has(name);
		return undefined;
	};
}

/**
 * Every reference to a missing file in the repository's code comments and Markdown files. A code
 * file is read whole first; only one that names a missing file somewhere (in a comment, or in a
 * string such as a test's sample) is parsed, which costs about 15 ms a file.
 */
export function missingFileReferences(): { checked: number; missing: string[] } {
	const files = repositoryFiles();
	const isMissing = missingFrom(files);
	let checked = 0;
	const missing: string[] = [];
	for (const file of files.filter((name) => name.endsWith('.md') || CODE.test(name))) {
		const content = fs.readFileSync(path.join(REPO_ROOT, file), 'utf8');
		const anywhere = namesIn(file.endsWith('.md') ? withoutLinkTargets(content) : content, file, 1).filter((reference) => isMissing(reference) !== undefined);
		checked += anywhere.length;
		if (!anywhere.some(isMissing)) continue;
		for (const reference of fileReferencesIn(file, content)) {
			if (isMissing(reference)) missing.push(`${reference.source}: no file ${reference.name} in the repository`);
		}
	}
	return { checked, missing };
}
