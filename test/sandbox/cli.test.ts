/** `npm run sandbox` (sandbox/cli.ts) takes its variants from --variants or SANDBOX_VARIANTS, checked as startSandbox checks them. */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { DEFAULT_VARIANTS } from '../../sandbox';

const ROOT = path.resolve(__dirname, '../..');

/** Runs the CLI on an ephemeral port; resolves with its output once it prints its base URL, or once it exits. */
function runCli(args: string[], env: NodeJS.ProcessEnv = {}) {
	const child: ChildProcess = spawn(process.execPath, ['--require', 'ts-node/register/transpile-only', 'sandbox/cli.ts', '--port', '0', ...args], {
		cwd: ROOT,
		env: { ...process.env, SANDBOX_VARIANTS: '', ...env },
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	let output = '';
	const started = new Promise<{ origin?: string; exitCode?: number | null; output: string }>((resolve) => {
		const onData = (chunk: Buffer) => {
			output += chunk.toString('utf8');
			const match = /Base URL:\s+(http:\/\/127\.0\.0\.1:\d+)\/service/.exec(output);
			if (match) resolve({ origin: match[1], output });
		};
		child.stdout!.on('data', onData);
		child.stderr!.on('data', onData);
		child.on('exit', (exitCode) => resolve({ exitCode, output }));
	});
	const stop = () =>
		new Promise<void>((resolve) => {
			if (child.exitCode !== null || child.signalCode !== null) return resolve();
			child.once('exit', () => resolve());
			child.kill('SIGTERM');
		});
	return { started, stop };
}

describe('npm run sandbox: variants', () => {
	test('--variants and SANDBOX_VARIANTS set the readings; the printed and served variants agree', async () => {
		for (const [args, env] of [
			[['--variants', '{"authorIds":"marketplaceUserId","unnamedQueryParameters":"rejected"}'], {}],
			[[], { SANDBOX_VARIANTS: '{"authorIds":"marketplaceUserId","unnamedQueryParameters":"rejected"}' }],
		] as const) {
			const cli = runCli([...args], env);
			try {
				const { origin, output } = await cli.started;
				expect(origin).toEqual(expect.any(String));
				const expected = { ...DEFAULT_VARIANTS, authorIds: 'marketplaceUserId', unnamedQueryParameters: 'rejected' };
				expect(output).toContain(JSON.stringify(expected));
				expect(await (await fetch(`${origin}/_sandbox/variants`)).json()).toEqual({ data: expected });
			} finally {
				await cli.stop();
			}
		}
	});

	test('an unknown value stops it with a message naming the field', async () => {
		const cli = runCli(['--variants', '{"vendorProposalId":"jobId"}']);
		try {
			const { exitCode, output } = await cli.started;
			expect(exitCode).toBe(1);
			expect(output).toMatch(/Sandbox failed to start: vendorProposalId must be one of proposalUid, marketplaceId/);
		} finally {
			await cli.stop();
		}
	});
});
