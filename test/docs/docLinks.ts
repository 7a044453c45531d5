/**
 * The documentation links the package ships (codex files, the credential's documentationUrl) and the
 * links of every Markdown file of the repository, resolved to files of this repository and checked
 * there: the file must exist and the anchor must be one GitHub renders for that file's headings. No
 * network.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import GithubSlugger from 'github-slugger';

export const REPO_ROOT = path.join(__dirname, '../..');

/** The repository's address on GitHub, from package.json (`git+https://github.com/o/r.git`). */
export function repositoryUrl(): string {
	const packageJson = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { repository: { url: string } };
	return packageJson.repository.url.replace(/^git\+/, '').replace(/\.git$/, '');
}

export interface DocLink {
	/** Where the link is written: a repository-relative file, with a line number for Markdown. */
	source: string;
	target: string;
}

const FENCE = /^\s*(```|~~~)/;

/** Markdown lines outside fenced code blocks, with their 1-based numbers. */
function proseLines(markdown: string): Array<{ line: string; number: number }> {
	const lines: Array<{ line: string; number: number }> = [];
	let inFence = false;
	markdown.split('\n').forEach((line, index) => {
		if (FENCE.test(line)) inFence = !inFence;
		else if (!inFence) lines.push({ line, number: index + 1 });
	});
	return lines;
}

const withoutCodeSpans = (line: string) => line.replace(/(`+)[^`]*?\1/g, '');

/** The text GitHub renders for a heading's Markdown: code spans, links, images, emphasis and tags unwrapped. */
export function headingText(markdown: string): string {
	return markdown
		.replace(/(`+)\s?([^`]*?)\s?\1/g, '$2')
		.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
		.replace(/<[^>]+>/g, '')
		.replace(/(\*\*|__)(.+?)\1/g, '$2')
		.replace(/(^|\W)[*_](.+?)[*_](?=\W|$)/g, '$1$2')
		.replace(/\\([\\`*_{}[\]()#+\-.!])/g, '$1')
		.replace(/&amp;/g, '&')
		.trim();
}

/** The anchors GitHub gives a Markdown file: one per heading (duplicates get -1, -2, …) and explicit `<a id|name>`. */
export function anchorsOf(markdown: string): Set<string> {
	const slugger = new GithubSlugger();
	const anchors = new Set<string>();
	for (const { line } of proseLines(markdown)) {
		const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line);
		if (heading) anchors.add(slugger.slug(headingText(heading[1])));
		for (const explicit of withoutCodeSpans(line).matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(explicit[1]);
	}
	return anchors;
}

/** Inline links and images, reference definitions and `<img src>` of a Markdown file, outside code. */
export function markdownLinks(markdown: string, source: string): DocLink[] {
	const links: DocLink[] = [];
	for (const { line, number } of proseLines(markdown)) {
		const prose = withoutCodeSpans(line);
		const targets = [
			...[...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1]),
			...[...prose.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/g)].map((match) => match[1]),
			...[...prose.matchAll(/<img\s[^>]*src="([^"]+)"/g)].map((match) => match[1]),
		];
		for (const target of targets) links.push({ source: `${source}:${number}`, target });
	}
	return links;
}

/** The codex documentation links of every node and the documentationUrl of every credential. */
export function packageDocLinks(): DocLink[] {
	const links: DocLink[] = [];
	for (const node of fs.readdirSync(path.join(REPO_ROOT, 'nodes'))) {
		const folder = path.join('nodes', node);
		for (const file of fs.readdirSync(path.join(REPO_ROOT, folder)).filter((name) => name.endsWith('.node.json'))) {
			const codex = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, folder, file), 'utf8')) as { resources?: Record<string, Array<{ url: string }>> };
			for (const [kind, entries] of Object.entries(codex.resources ?? {})) {
				for (const entry of entries) links.push({ source: `${folder}/${file} ${kind}`, target: entry.url });
			}
		}
	}
	for (const file of fs.readdirSync(path.join(REPO_ROOT, 'credentials')).filter((name) => name.endsWith('.credentials.ts'))) {
		const source = fs.readFileSync(path.join(REPO_ROOT, 'credentials', file), 'utf8');
		for (const match of source.matchAll(/documentationUrl\s*=\s*'([^']+)'/g)) links.push({ source: `credentials/${file} documentationUrl`, target: match[1] });
	}
	return links;
}

/** The repository's files, repository-relative: tracked, and new ones git does not ignore. */
export function repositoryFiles(): string[] {
	const listed = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: REPO_ROOT, encoding: 'utf8' });
	// A tracked file deleted in the working tree is gone.
	return listed.split('\n').filter((file) => file !== '' && fs.existsSync(path.join(REPO_ROOT, file)));
}

/** Every Markdown file of the repository (README, docs/, sandbox/, scripts/, test/ ...). */
export function markdownFiles(): string[] {
	return repositoryFiles().filter((file) => file.endsWith('.md'));
}

export type Resolved = { external: true } | { external: false; file: string; anchor?: string };

/**
 * A link as a repository file and anchor. The repository's own GitHub addresses (the README at the
 * root, `/blob/<branch>/<path>`, `/tree/<branch>/<path>`) map to files; other absolute addresses are
 * external and not checked (no network). Relative targets resolve against the linking file's folder.
 */
export function resolveLink(target: string, fromFile: string, repository = repositoryUrl()): Resolved {
	const [address, anchor] = splitAnchor(target);
	if (address.startsWith(repository)) {
		const rest = address.slice(repository.length);
		if (rest === '' || rest === '/') return { external: false, file: 'README.md', anchor };
		// A version's changes and release (CHANGELOG.md): pages of a tag, which exists once it is released.
		if (/^\/(?:compare|releases)\//.test(rest)) return { external: true };
		const inTree = /^\/(?:blob|tree)\/[^/]+\/(.+?)\/?$/.exec(rest);
		// Any other page of the repository on GitHub (issues, wiki) names no file here: an error.
		return inTree ? { external: false, file: decodeURI(inTree[1]), anchor } : { external: false, file: `<not a file of the repository: ${address}>`, anchor };
	}
	if (/^[a-z][a-z0-9+.-]*:/i.test(address) || address.startsWith('//')) return { external: true };
	const file = address === '' ? fromFile : path.posix.normalize(path.posix.join(path.posix.dirname(fromFile), decodeURI(address)));
	return { external: false, file, anchor };
}

function splitAnchor(target: string): [string, string | undefined] {
	const hash = target.indexOf('#');
	return hash === -1 ? [target, undefined] : [target.slice(0, hash), decodeURIComponent(target.slice(hash + 1))];
}

/** What is wrong with a resolved link, or undefined when it points at a file and heading that exist. */
export function problemWith(resolved: Resolved, anchorsByFile: (file: string) => Set<string>): string | undefined {
	if (resolved.external) return undefined;
	const absolute = path.join(REPO_ROOT, resolved.file);
	if (resolved.file.startsWith('..') || !fs.existsSync(absolute)) return `no file ${resolved.file} in the repository`;
	if (resolved.anchor === undefined) return undefined;
	if (!resolved.file.endsWith('.md')) return `${resolved.file} is not Markdown, so it has no heading #${resolved.anchor}`;
	return anchorsByFile(resolved.file).has(resolved.anchor) ? undefined : `no heading #${resolved.anchor} in ${resolved.file}`;
}

/** Every broken documentation link of the package and the Markdown files, as "source -> target: problem". */
export function brokenDocLinks(): { checked: number; broken: string[] } {
	const anchorCache = new Map<string, Set<string>>();
	const anchorsByFile = (file: string) => {
		if (!anchorCache.has(file)) anchorCache.set(file, anchorsOf(fs.readFileSync(path.join(REPO_ROOT, file), 'utf8')));
		return anchorCache.get(file)!;
	};
	const links = [
		...packageDocLinks().map((link) => ({ link, fromFile: 'README.md' })),
		...markdownFiles().flatMap((page) =>
			markdownLinks(fs.readFileSync(path.join(REPO_ROOT, page), 'utf8'), page).map((link) => ({ link, fromFile: page })),
		),
	];
	const broken: string[] = [];
	for (const { link, fromFile } of links) {
		const problem = problemWith(resolveLink(link.target, fromFile), anchorsByFile);
		if (problem) broken.push(`${link.source} -> ${link.target}: ${problem}`);
	}
	return { checked: links.length, broken };
}
