// Exits 0 only when the release tag names the version in package.json (`v` + version), so the
// publish workflow never publishes a version the tag does not name.
//   node scripts/release/checkTagVersion.mjs <tag>     (in GitHub Actions: "$GITHUB_REF_NAME")
import { readFileSync } from 'node:fs';

const tag = process.argv[2] ?? '';
const { version } = JSON.parse(readFileSync('package.json', 'utf8'));
if (tag !== `v${version}`) {
	console.error(`tag "${tag}" does not match package.json's version ${version} (expected v${version})`);
	process.exit(1);
}
console.log(`tag ${tag} matches package.json's version ${version}`);
