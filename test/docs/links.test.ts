/**
 * Every documentation link the package ships points where it says: the Docs links of the editor
 * (codex primaryDocumentation, credentialDocumentation), the credential's documentationUrl, and the
 * links of every Markdown file of the repository, down to the heading. Files are checked in this
 * repository and anchors with GitHub's heading rules; no network. And no code comment or Markdown
 * text names a repository file that does not exist.
 */
import { anchorsOf, brokenDocLinks, headingText, markdownFiles, markdownLinks, packageDocLinks, problemWith, repositoryUrl, resolveLink } from './docLinks';
import { commentsOf, fileReferencesIn, missingFileReferences, missingFrom } from './fileReferences';

describe("GitHub's heading anchors", () => {
	it('lowercases, drops punctuation but - and _, turns spaces into - and numbers duplicates', () => {
		const markdown = ['# Agency Inbox (actions)', "## n8n's own checks", '## Rate limit, retries and errors', '### Limits', '### Limits', '### Limits', '## snake_case - and more!'].join('\n');
		expect([...anchorsOf(markdown)]).toEqual(['agency-inbox-actions', 'n8ns-own-checks', 'rate-limit-retries-and-errors', 'limits', 'limits-1', 'limits-2', 'snake_case---and-more']);
	});

	it('reads headings as GitHub renders them: code spans and links unwrapped, emphasis dropped', () => {
		expect(headingText('Sample workflows and `npm start`')).toBe('Sample workflows and npm start');
		expect(headingText('The [sandbox](docs/sandbox.md) and **its** _control_ endpoints')).toBe('The sandbox and its control endpoints');
		expect([...anchorsOf('## `npm start`: the samples running in a real n8n')]).toEqual(['npm-start-the-samples-running-in-a-real-n8n']);
	});

	it('ignores headings and links inside fenced code, and reads explicit anchors', () => {
		const markdown = ['```bash', '# not a heading', '[not](a-link.md)', '```', '<a id="kept"></a>', 'See [x](y.md#z) and `[code](no.md)`.'].join('\n');
		expect([...anchorsOf(markdown)]).toEqual(['kept']);
		expect(markdownLinks(markdown, 'page.md')).toEqual([{ source: 'page.md:6', target: 'y.md#z' }]);
	});
});

describe('resolving links to repository files', () => {
	const repository = 'https://github.com/agency-inbox/n8n-nodes-agency-inbox';

	it("maps the repository's GitHub addresses and relative links to files and anchors", () => {
		expect(resolveLink(`${repository}#credentials`, 'README.md', repository)).toEqual({ external: false, file: 'README.md', anchor: 'credentials' });
		expect(resolveLink(`${repository}/blob/main/docs/queue-mode.md#running-in-queue-mode`, 'README.md', repository)).toEqual({ external: false, file: 'docs/queue-mode.md', anchor: 'running-in-queue-mode' });
		expect(resolveLink(`${repository}/tree/main/workflows`, 'README.md', repository)).toEqual({ external: false, file: 'workflows', anchor: undefined });
		expect(resolveLink('../README.md#compatibility', 'docs/development.md', repository)).toEqual({ external: false, file: 'README.md', anchor: 'compatibility' });
		expect(resolveLink('#limits', 'docs/x.md', repository)).toEqual({ external: false, file: 'docs/x.md', anchor: 'limits' });
		expect(resolveLink('https://www.npmjs.com/package/playwright-core', 'README.md', repository)).toEqual({ external: true });
	});

	it("takes the CHANGELOG's version pages (compare, releases) as pages of GitHub, other pages of the repository as errors", () => {
		expect(resolveLink(`${repository}/compare/v0.1.0...HEAD`, 'CHANGELOG.md', repository)).toEqual({ external: true });
		expect(resolveLink(`${repository}/releases/tag/v0.1.0`, 'CHANGELOG.md', repository)).toEqual({ external: true });
		expect(resolveLink(`${repository}/issues`, 'README.md', repository)).toMatchObject({ external: false, file: expect.stringContaining('not a file of the repository') });
	});

	it('reports a missing file, a missing heading and an anchor into a file that has no headings', () => {
		const anchors = () => new Set(['credentials']);
		expect(problemWith({ external: false, file: 'docs/nowhere.md' }, anchors)).toBe('no file docs/nowhere.md in the repository');
		expect(problemWith({ external: false, file: 'README.md', anchor: 'agency-inbox-node' }, anchors)).toBe('no heading #agency-inbox-node in README.md');
		expect(problemWith({ external: false, file: 'package.json', anchor: 'x' }, anchors)).toBe('package.json is not Markdown, so it has no heading #x');
		expect(problemWith({ external: false, file: 'README.md', anchor: 'credentials' }, anchors)).toBeUndefined();
	});
});

describe('the documentation links of the package and of every Markdown file', () => {
	it("reads the editor's Docs links of all five nodes and the credential's, all into this repository", () => {
		const links = packageDocLinks();
		expect(links.map((link) => link.source).sort()).toEqual([
			'credentials/AgencyInboxApi.credentials.ts documentationUrl',
			'nodes/AgencyInbox/AgencyInbox.node.json credentialDocumentation',
			'nodes/AgencyInbox/AgencyInbox.node.json primaryDocumentation',
			'nodes/AgencyInboxInvitationTrigger/AgencyInboxInvitationTrigger.node.json credentialDocumentation',
			'nodes/AgencyInboxInvitationTrigger/AgencyInboxInvitationTrigger.node.json primaryDocumentation',
			'nodes/AgencyInboxMessageTrigger/AgencyInboxMessageTrigger.node.json credentialDocumentation',
			'nodes/AgencyInboxMessageTrigger/AgencyInboxMessageTrigger.node.json primaryDocumentation',
			'nodes/AgencyInboxProposalTrigger/AgencyInboxProposalTrigger.node.json credentialDocumentation',
			'nodes/AgencyInboxProposalTrigger/AgencyInboxProposalTrigger.node.json primaryDocumentation',
			'nodes/AgencyInboxTrigger/AgencyInboxTrigger.node.json credentialDocumentation',
			'nodes/AgencyInboxTrigger/AgencyInboxTrigger.node.json primaryDocumentation',
		]);
		expect(links.every((link) => link.target.startsWith(`${repositoryUrl()}#`) || link.target.startsWith(`${repositoryUrl()}/`))).toBe(true);
	});

	it('reads every Markdown file of the repository, not only the README and docs/', () => {
		expect(markdownFiles()).toEqual(expect.arrayContaining(['README.md', 'CHANGELOG.md', 'docs/sandbox.md', 'sandbox/README.md', 'scripts/n8n/NOTES.md']));
	});

	it('point at files and headings that exist', () => {
		const { checked, broken } = brokenDocLinks();
		expect(broken).toEqual([]);
		// The README alone links to its sections and docs/ pages dozens of times.
		expect(checked).toBeGreaterThan(50);
	});
});

describe('file names in code comments and Markdown text', () => {
	it('reads comments as the compiler does: not strings, regular expressions or template literals', () => {
		const code = [
			"const a = '// GONE.md'; // see README.md",
			'/** Beside docs/sandbox.md. */',
			'const b = /\\/\\/ NOPE.md/;',
			'const c = `${a} // NOPE.md`;',
		].join('\n');
		expect(commentsOf('x.ts', code)).toEqual([
			{ text: '// see README.md', line: 1 },
			{ text: '/** Beside docs/sandbox.md. */', line: 2 },
		]);
	});

	it('checks Markdown names, paths from a top-level folder and relative paths; not bare names of other files or paths into other repositories', () => {
		const files = ['README.md', 'docs/sandbox.md', 'nodes/shared/transport.ts', 'nodes/AgencyInbox/resources/agency/get.ts', 'sandbox/index.ts'];
		const fromFile = 'nodes/AgencyInbox/resources/agency/index.ts';
		const comment = [
			'// DESIGN.md, README.md, sandbox.md, docs/gone.md; nodes/shared/transport.ts, nodes/shared/gone.ts;',
			'// ./get.ts, ./gone.ts, ../../../../README.md; transport.ts, packages/cli/src/live-webhooks.ts,',
			'// nodes/package.json, dist/nodes/<Class>/<Class>.node.js, https://github.com/o/r/blob/main/GONE.md',
		].join('\n');
		const isMissing = missingFrom(files);
		const verdicts = fileReferencesIn(fromFile, comment).map((reference) => [reference.name, isMissing(reference)]);
		expect(verdicts).toEqual([
			['DESIGN.md', true],
			['README.md', false],
			['sandbox.md', false],
			['docs/gone.md', true],
			['nodes/shared/transport.ts', false],
			['nodes/shared/gone.ts', true],
			['./get.ts', false],
			['./gone.ts', true],
			['../../../../README.md', false],
			['transport.ts', undefined],
			['packages/cli/src/live-webhooks.ts', undefined],
			['nodes/package.json', undefined],
		]);
	});

	it('in Markdown, reads the text and code, and leaves link targets to the link check', () => {
		const markdown = 'See `sandbox/gone.ts` and [the sandbox](docs/gone.md).\n\n```bash\nnode scripts/gone.ts\n```';
		expect(fileReferencesIn('README.md', markdown).map(({ source, name }) => `${source} ${name}`)).toEqual(['README.md:1 sandbox/gone.ts', 'README.md:4 scripts/gone.ts']);
	});

	it('name only files that exist', () => {
		const { checked, missing } = missingFileReferences();
		expect(missing).toEqual([]);
		// The README and the code comments name files of the repository dozens of times.
		expect(checked).toBeGreaterThan(50);
	});
});
