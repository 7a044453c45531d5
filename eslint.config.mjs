// The checks n8n's community package scanner runs: @n8n/eslint-plugin-community-nodes (recommended)
// on the source and the built dist/, plus the community, credentials and nodes rule sets of
// eslint-plugin-n8n-nodes-base. Tests, the sandbox, scripts and benchmarks are not shipped, so the
// n8n rules do not apply to them.
import { configs as communityNodes } from '@n8n/eslint-plugin-community-nodes';
import n8nNodesBase from 'eslint-plugin-n8n-nodes-base';
import tseslint from 'typescript-eslint';

const shipped = ['package.json', 'credentials/**/*.ts', 'nodes/**/*.ts', 'dist/**/*.js'];
const n8nNodesBaseRules = (set) => ({ plugins: { 'n8n-nodes-base': n8nNodesBase }, rules: n8nNodesBase.configs[set].rules });

export default [
	{ ignores: ['node_modules/', 'coverage/', 'sandbox/', 'test/', 'scripts/', 'bench/', 'workflows/', '**/*.map', '*.config.js', 'gulpfile.js'] },
	{ files: ['**/*.ts', 'dist/**/*.js'], languageOptions: { parser: tseslint.parser, sourceType: 'module' } },
	{ files: ['package.json'], languageOptions: { parser: tseslint.parser, parserOptions: { extraFileExtensions: ['.json'] } } },
	{ ...communityNodes.recommended, files: shipped },
	{ files: ['package.json'], ...n8nNodesBaseRules('community') },
	{ files: ['credentials/**/*.ts'], ...n8nNodesBaseRules('credentials') },
	// The rule's own documentation: "Only applicable to nodes in the main repository"; ours is a URL.
	{ files: ['credentials/**/*.ts'], rules: { 'n8n-nodes-base/cred-class-field-documentation-url-miscased': 'off' } },
	{ files: ['nodes/**/*.ts'], ...n8nNodesBaseRules('nodes') },
	// These two want the string 'main', which the newer community rule node-connection-type-literal
	// forbids in favour of NodeConnectionTypes.Main; the community plugin is the one n8n Cloud applies.
	{
		files: ['nodes/**/*.ts'],
		rules: {
			'n8n-nodes-base/node-class-description-inputs-wrong-regular-node': 'off',
			'n8n-nodes-base/node-class-description-outputs-wrong': 'off',
		},
	},
];
