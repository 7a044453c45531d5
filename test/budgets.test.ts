/**
 * The time budgets of the real-n8n test files (test/budgets.json): every file has one, the docs list
 * each, the files start longest budget first, and the closing table names a file over its budget.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const repoRoot = path.resolve(__dirname, '..');
const budgets = require('./budgets.json') as Record<string, number>;
const BudgetSequencer = require('./helpers/budgetSequencer') as new () => { sort(tests: object[]): Array<{ path: string }> };
const { costLines } = require('./helpers/fileCostsReporter') as { costLines(costs: object[]): string[] };

const REAL_N8N_SUITES = ['e2e', 'queue', 'browser'];
const realN8nTestFiles = () =>
	REAL_N8N_SUITES.flatMap((suite) =>
		readdirSync(path.join(repoRoot, 'test', suite))
			.filter((name) => name.endsWith('.test.ts'))
			.map((name) => `test/${suite}/${name}`),
	).sort();

it('gives every real-n8n test file a budget, and no budget to a file that is gone', () => {
	expect(Object.keys(budgets).sort()).toEqual(realN8nTestFiles());
});

it('lists each budget in docs/development.md, "Time budgets"', () => {
	const docs = readFileSync(path.join(repoRoot, 'docs', 'development.md'), 'utf8');
	const listed = Object.entries(budgets).filter(([file, seconds]) => docs.includes(`| \`${file}\` | ${seconds} |`));
	expect(listed.map(([file]) => file)).toEqual(Object.keys(budgets));
});

it('starts a file without a budget first, then the longest budget first', () => {
	const test = (file: string) => ({ path: path.join(repoRoot, file), context: { config: { rootDir: repoRoot } } });
	const [longest, shortest] = Object.entries(budgets).sort(([, a], [, b]) => b - a).map(([file]) => file).filter((_, index, all) => index === 0 || index === all.length - 1);
	const order = new BudgetSequencer().sort([test(shortest), test('test/e2e/new.test.ts'), test(longest)]).map((sorted) => path.relative(repoRoot, sorted.path));
	expect(order).toEqual(['test/e2e/new.test.ts', longest, shortest]);
});

it('names a file over its budget and a file without one in the closing table, with the sums per suite', () => {
	const [file, seconds] = Object.entries(budgets).find(([name]) => name.startsWith('test/e2e/'))!;
	const lines = costLines([
		{ file, wallSeconds: seconds + 1, cpuSeconds: 10 },
		{ file: 'test/e2e/new.test.ts', wallSeconds: 5, cpuSeconds: 2 },
	]);
	expect(lines.find((line) => line.endsWith(file + '  OVER BUDGET'))).toBeDefined();
	expect(lines.find((line) => line.endsWith('test/e2e/new.test.ts  (no budget)'))).toBeDefined();
	expect(lines).toContain(`suite e2e: 2 file(s), ${seconds + 6} s of wall time (budget ${seconds} s), 12 CPU s`);
});
