/**
 * The service's local twin (what it does, its control endpoints and variants: docs/sandbox.md; its files: README.md here).
 *
 *   const sandbox = await startSandbox({ requestsPerMinute: 20 });
 *   // credential Base URL = sandbox.url, API key = sandbox.apiKey
 *   await sandbox.close();
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SandboxCore } from './core';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from './pagination';
import { RollingWindowLimiter } from './rateLimit';
import { DEFAULT_ROOM_COUNT } from './seed';
import { BASE_PATH, createRequestHandler } from './server';
import { DEFAULT_SIMULATOR_INTERVAL_MS, Simulator } from './simulator';
import type { SandboxState } from './types';
import { checkVariants, DEFAULT_VARIANTS, type SandboxVariants } from './variants';
import { WebhookSender } from './webhooks';

/** How long the sandbox keeps an idle keep-alive connection open (clients close theirs sooner). */
export const IDLE_CONNECTION_TIMEOUT_MS = 65_000;

export type { SandboxState } from './types';
export { ALL_VARIANTS, DEFAULT_VARIANTS, SINGLE_READINGS, type SandboxVariants, type SingleReading } from './variants';
export { marketplaceProposalIdOf, marketplaceUserIdOf } from './marketplaceIds';

export interface SandboxOptions {
	/** Per API key, rolling 60 s window; default 20; 0 or Infinity = unlimited. */
	requestsPerMinute?: number;
	/** Length of the rate-limit window (default 60 000 ms); tests shorten it. */
	rateLimitWindowMs?: number;
	/** Default page size of every list (default 20); the `pageSize` query parameter overrides it (see the variant unnamedQueryParameters). */
	pageSize?: number;
	/** Largest page the service serves, whatever `pageSize` asks for (default 100; the spec states none). */
	maxPageSize?: number;
	/** Seeded proposal count (default 300; about 10% with updatedAt null). */
	proposals?: number;
	/** Seeded chat rooms (default 60): proposal i is linked to room i mod rooms, after the first of each room one in four to none. */
	rooms?: number;
	/** Multiplies the webhook retry schedule (default 1; tests use e.g. 0.001). */
	webhookTimeScale?: number;
	/** How long a webhook attempt waits for the answer before it counts as failed (default 15 000 ms, not scaled). */
	webhookAnswerTimeoutMs?: number;
	/** Activity simulator (default off); `true` = every 5 s. */
	simulator?: boolean | { intervalMs: number };
	seed?: number;
	/** Port to listen on (default 0 = ephemeral). */
	port?: number;
	/** Host to listen on (default 127.0.0.1). */
	host?: string;
	/** Readings of what the spec leaves open (default DEFAULT_VARIANTS); changeable later through /_sandbox/variants. */
	variants?: Partial<SandboxVariants>;
	/** How far the service's clock (its times and its answers' Date header) runs ahead of this machine's; negative: behind. Default 0. */
	clockOffsetMs?: number;
}

export interface Sandbox {
	/** Base URL for the credential, e.g. http://127.0.0.1:5680/service */
	url: string;
	origin: string;
	apiKey: string;
	apiKeys: string[];
	signingSecret: string;
	state: SandboxState;
	/**
	 * Starts the activity simulator (default every 5 s). A change is delivered only to the webhook
	 * endpoints registered when it happens, as the service does: start it once the receivers listen.
	 */
	startSimulator(intervalMs?: number): void;
	close(): Promise<void>;
}

const DEFAULT_SEED = 20_240_601;

/** A stable, seed-derived `whsec_` secret (the sandbox's own demo secret). */
function signingSecretFor(seed: number): string {
	return `whsec_${createHash('sha256').update(`agency-inbox-sandbox-signing-secret-${seed}`).digest().subarray(0, 24).toString('base64')}`;
}

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
	const variants = { ...DEFAULT_VARIANTS, ...checkVariants(options.variants ?? {}) };
	const seed = options.seed ?? DEFAULT_SEED;
	const signingSecret = signingSecretFor(seed);
	const apiKeys = ['sandbox-key-1', 'sandbox-key-2'];
	const webhooks = new WebhookSender(signingSecret, options.webhookTimeScale ?? 1, options.webhookAnswerTimeoutMs);
	const limiter = new RollingWindowLimiter(options.requestsPerMinute ?? 20, options.rateLimitWindowMs);
	const core = new SandboxCore({ seed, proposals: options.proposals ?? 300, rooms: options.rooms ?? DEFAULT_ROOM_COUNT, pageSize: options.pageSize ?? DEFAULT_PAGE_SIZE, maxPageSize: options.maxPageSize ?? MAX_PAGE_SIZE, variants, clockOffsetMs: options.clockOffsetMs }, limiter, webhooks);
	const simulator = new Simulator(core, seed);
	const keyIds = new Map(apiKeys.map((key, i) => [key, `key-${i + 1}`]));

	// Idle connections are left for the client to close (Node closes them after 5 s, undici's fetch
	// after 4 s): on a busy machine both timers fire late together and a request on a closing
	// connection fails with ECONNRESET.
	const server = createServer({ keepAliveTimeout: IDLE_CONNECTION_TIMEOUT_MS }, createRequestHandler({ core, simulator, keyIds }));
	await new Promise<void>((resolve, reject) => {
		server.once('error', reject);
		server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
			server.off('error', reject);
			resolve();
		});
	});
	const { port } = server.address() as AddressInfo;
	const origin = `http://${options.host ?? '127.0.0.1'}:${port}`;

	if (options.simulator) {
		simulator.start(typeof options.simulator === 'object' ? options.simulator.intervalMs : DEFAULT_SIMULATOR_INTERVAL_MS);
	}

	let closing: Promise<void> | undefined;
	return {
		url: `${origin}${BASE_PATH}`,
		origin,
		apiKey: apiKeys[0],
		apiKeys,
		signingSecret,
		state: core.state,
		startSimulator: (intervalMs = DEFAULT_SIMULATOR_INTERVAL_MS) => simulator.start(intervalMs),
		close() {
			closing ??= new Promise<void>((resolve) => {
				simulator.stop();
				webhooks.close();
				server.close(() => resolve());
				server.closeAllConnections();
			});
			return closing;
		},
	};
}
