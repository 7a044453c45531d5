/**
 * `npm run sandbox [-- --port 5680] [--simulate [intervalMs]] [--variants '{"roomSort":"lastClientMessageAt"}']`:
 * runs the sandbox for people and demos.
 * Env: SANDBOX_PORT, SANDBOX_RPM (requests per minute), SANDBOX_WEBHOOK_TIME_SCALE, SANDBOX_WEBHOOK_ANSWER_TIMEOUT_MS,
 * SANDBOX_VARIANTS (JSON, as --variants).
 */
import { DEFAULT_VARIANTS, startSandbox, type SandboxVariants } from './index';

function argValue(args: string[], name: string): string | undefined {
	const index = args.indexOf(name);
	if (index === -1) return undefined;
	const next = args[index + 1];
	return next !== undefined && !next.startsWith('--') ? next : '';
}

function parseVariants(json: string | undefined): Partial<SandboxVariants> | undefined {
	if (!json) return undefined;
	try {
		return JSON.parse(json) as Partial<SandboxVariants>;
	} catch {
		throw new Error(`--variants / SANDBOX_VARIANTS is not JSON: ${json}`);
	}
}

async function main(): Promise<void> {
	const args = process.argv.slice(2);
	const port = Number(argValue(args, '--port') || process.env.SANDBOX_PORT || 5680);
	const simulateArg = argValue(args, '--simulate');
	const rpm = argValue(args, '--rpm') || process.env.SANDBOX_RPM;
	const timeScale = process.env.SANDBOX_WEBHOOK_TIME_SCALE;
	const answerTimeoutMs = process.env.SANDBOX_WEBHOOK_ANSWER_TIMEOUT_MS;
	// startSandbox checks the fields and values.
	const variants = parseVariants(argValue(args, '--variants') || process.env.SANDBOX_VARIANTS);
	const sandbox = await startSandbox({
		port,
		requestsPerMinute: rpm ? Number(rpm) : undefined,
		webhookTimeScale: timeScale ? Number(timeScale) : undefined,
		webhookAnswerTimeoutMs: answerTimeoutMs ? Number(answerTimeoutMs) : undefined,
		simulator: simulateArg === undefined ? false : simulateArg === '' ? true : { intervalMs: Number(simulateArg) },
		variants,
	});
	// A local sandbox printing its own demo key and secret is intended: they are not real credentials.
	console.log(`Agency Inbox sandbox listening
  Base URL:        ${sandbox.url}
  API key:         ${sandbox.apiKey}   (second key: ${sandbox.apiKeys[1]})
  Signing secret:  ${sandbox.signingSecret}
  Control:         ${sandbox.origin}/_sandbox/  (changes, events, webhook-endpoints, webhook-settings, deliveries, requests, faults, rate, variants, reset)
  Variants:        ${JSON.stringify({ ...DEFAULT_VARIANTS, ...variants })}   (change: POST /_sandbox/variants)
  Simulator:       ${simulateArg === undefined ? 'off (start with --simulate [intervalMs] or POST /_sandbox/simulator)' : 'on'}
Press Ctrl+C to stop.`);
	const stop = () => {
		void sandbox.close().then(() => process.exit(0));
	};
	process.on('SIGINT', stop);
	process.on('SIGTERM', stop);
}

main().catch((error: Error) => {
	console.error(`Sandbox failed to start: ${error.message}`);
	process.exit(1);
});
