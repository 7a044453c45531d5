// Build steps beside tsc: n8n loads icons and codex files from dist/, next to the compiled nodes.
const { src, dest } = require('gulp');

function copyAssets() {
	return src(['icons/*.svg', 'nodes/**/*.json', 'nodes/**/*.svg'], { base: '.', encoding: false }).pipe(dest('dist'));
}

exports['build:assets'] = copyAssets;
