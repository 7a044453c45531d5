/**
 * `npm run sandbox [-- --port 5680] [--simulate [intervalMs]]`: runs the sandbox for people and demos.
 * Env: SANDBOX_PORT, SANDBOX_RPM (requests per minute), SANDBOX_WEBHOOK_TIME_SCALE.
 */
import { startSandbox } from './index';

function argValue(args: string[], name: string): string | undefined {
	const index = args.indexOf(name);
	if (index === -1) return undefined;
	const next = args[index + 1];
	return next !== undefined && !next.startsWith('--') ? next : '';
}

async function main(): Promise<void> {
	const args = process.argv.slice(2);
	const port = Number(argValue(args, '--port') || process.env.SANDBOX_PORT || 5680);
	const simulateArg = argValue(args, '--simulate');
	const rpm = argValue(args, '--rpm') || process.env.SANDBOX_RPM;
	const timeScale = process.env.SANDBOX_WEBHOOK_TIME_SCALE;
	const sandbox = await startSandbox({
		port,
		requestsPerMinute: rpm ? Number(rpm) : undefined,
		webhookTimeScale: timeScale ? Number(timeScale) : undefined,
		simulator: simulateArg === undefined ? false : simulateArg === '' ? true : { intervalMs: Number(simulateArg) },
	});
	// A local sandbox printing its own demo key and secret is intended: they are not real credentials.
	console.log(`Agency Inbox sandbox listening
  Base URL:        ${sandbox.url}
  API key:         ${sandbox.apiKey}   (second key: ${sandbox.apiKeys[1]})
  Signing secret:  ${sandbox.signingSecret}
  Control:         ${sandbox.origin}/_sandbox/  (changes, events, webhook-endpoints, deliveries, requests, faults, rate, reset)
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
