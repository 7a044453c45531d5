/**
 * The one request pipeline: every request of every Agency Inbox node goes through here. Budget per
 * API key, the run's place in its queue, 429 waits, retries of reads, problem objects as NodeApiError.
 * What to ask the service (paths, query parameters, the optional ones, paging) is serviceClient.ts.
 */
import type {
	IAllExecuteFunctions,
	ICredentialDataDecryptedObject,
	IDataObject,
	IHttpRequestMethods,
	IHttpRequestOptions,
	IN8nHttpFullResponse,
	INode,
} from 'n8n-workflow';
import { NodeOperationError, sleep } from 'n8n-workflow';

import type { ProblemObject, RequestFailure } from './errors';
import { networkErrorCodeOf, toNodeApiError } from './errors';
import type { Envelope } from './pagination';
import { processStore } from './processMemory';
import { budgetKeyFor, RollingWindowBudget, shareOfBudget } from './requestBudget';
import { runOrderOf, type RunContext } from './runOrder';

export const CREDENTIAL_TYPE = 'agencyInboxApi';

const DEFAULT_REQUESTS_PER_MINUTE = 20;

/** Timing of the pipeline. Tests shorten it; n8n never changes it. */
export const pipelineTiming = {
	/** The service's rolling rate-limit window. */
	windowMs: 60_000,
	marginMs: 20,
	busyPollMs: 25,
	/** A run's next request (the reply after Get Proposal) comes within this time after an answer. */
	followUpMs: 2_000,
	/** Least wait after a 429, so a Retry-After of 0 cannot spin. */
	minRateLimitWaitMs: 250,
	/** Most time spent waiting on 429 answers for one request before failing. */
	maxRateLimitWaitMs: 120_000,
	/** Waits before each retry of a read after a 5xx or network error. */
	retryBackoffMs: [1_000, 2_000, 4_000],
};

/** Every execution in the n8n process shares one budget per API key; its state is kept in a process store. */
const requestBudget = new RollingWindowBudget(pipelineTiming, processStore);

/** The parts of an n8n function context the pipeline uses (execute, poll, webhook, load options). */
export interface PipelineContext extends RunContext {
	getNode(): INode;
	getCredentials<T extends object = ICredentialDataDecryptedObject>(type: string, itemIndex?: number): Promise<T>;
	helpers: { httpRequestWithAuthentication: IAllExecuteFunctions['helpers']['httpRequestWithAuthentication'] };
}

export interface PipelineRequest {
	method: string;
	path: string;
	/** Reads may be sent again after a 5xx or network error; writes only after a 429. */
	idempotent: boolean;
	budgetKey: string;
	/** Requests per rolling window for this key. */
	limit: number;
	/** The place of the request's run in the budget's queue (runOrder.ts); lower goes first; none outside a run. */
	order?: number;
	/** Text never to show in an error (the API key). */
	secret?: string;
	itemIndex?: number;
}

/** How long a 429 asks us to wait: Retry-After in seconds or as an HTTP date, else one window. */
export function rateLimitWaitMs(headers: IDataObject | undefined, now = Date.now()): number {
	const retryAfter = headers?.['retry-after'] ?? headers?.['Retry-After'];
	if (retryAfter === undefined || retryAfter === null || retryAfter === '') return pipelineTiming.windowMs;
	const seconds = Number(retryAfter);
	if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
	const date = Date.parse(String(retryAfter));
	return Number.isNaN(date) ? pipelineTiming.windowMs : Math.max(0, date - now);
}

function problemFrom(body: unknown): ProblemObject | undefined {
	const parsed = typeof body === 'string' ? parseJsonOrUndefined(body) : body;
	return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as ProblemObject) : undefined;
}

function parseJsonOrUndefined(text: string): unknown {
	try {
		return JSON.parse(text);
	} catch {
		return undefined;
	}
}

/** The message of an error that is not a network failure, so the user sees its real cause. */
function causeOf(error: unknown): string {
	const message = error instanceof Error ? error.message : String(error);
	return message.trim() || (error instanceof Error ? error.name : 'unknown error');
}

/**
 * Whether n8n's HTTP client would send the path somewhere else: it resolves "." and ".." segments,
 * also percent-encoded ones (%2e) and after a backslash, as URLs do.
 */
export function pathIsRewritten(path: string): boolean {
	const [pathOnly] = path.split(/[?#]/, 1);
	return pathOnly.split(/[/\\]/).some((segment) => /^(?:\.|%2e){1,2}$/i.test(segment));
}

/**
 * Sends one request within the key's budget: waits for a slot, honours 429 (Retry-After) within a
 * bounded total wait, retries idempotent requests on 5xx and network errors with backoff, and turns
 * any remaining failure into NodeApiError. `send` must perform exactly one HTTP request.
 */
export async function sendThroughPipeline(
	context: Pick<PipelineContext, 'getNode'>,
	send: () => Promise<IN8nHttpFullResponse>,
	request: PipelineRequest,
): Promise<IN8nHttpFullResponse> {
	let rateLimitWaitedMs = 0;
	let retriesAfterFailure = 0;
	let attempts = 0;
	const fail = (failure: Partial<RequestFailure>) =>
		toNodeApiError(
			context.getNode(),
			{ method: request.method, path: request.path, attempts, ...failure },
			request.secret,
			request.itemIndex,
		);
	const mayRetryFailure = () => request.idempotent && retriesAfterFailure < pipelineTiming.retryBackoffMs.length;

	for (;;) {
		const slot = await requestBudget.acquire(request.budgetKey, request.limit, request.order);
		attempts++;
		let response: IN8nHttpFullResponse;
		try {
			response = await send();
		} catch (error) {
			const networkErrorCode = networkErrorCodeOf(error);
			if (networkErrorCode && mayRetryFailure()) {
				await sleep(pipelineTiming.retryBackoffMs[retriesAfterFailure++]);
				continue;
			}
			throw fail(networkErrorCode ? { networkErrorCode } : { cause: causeOf(error) });
		} finally {
			requestBudget.release(slot);
		}

		const status = response.statusCode;
		if (status < 400) return response;
		if (status === 429) {
			// The service did not process it, so even a message may be sent again.
			const waitMs = Math.max(pipelineTiming.minRateLimitWaitMs, rateLimitWaitMs(response.headers as IDataObject));
			if (rateLimitWaitedMs + waitMs <= pipelineTiming.maxRateLimitWaitMs) {
				rateLimitWaitedMs += waitMs;
				requestBudget.pauseUntil(request.budgetKey, Date.now() + waitMs);
				continue;
			}
			if (waitMs > pipelineTiming.maxRateLimitWaitMs) {
				// Asked to wait longer than the cap: say so, not "after waiting 0 s".
				throw fail({
					statusCode: status,
					problem: problemFrom(response.body),
					rateLimitWaitSeconds: Math.round(rateLimitWaitedMs / 1000),
					rateLimitRefusedWaitSeconds: Math.ceil(waitMs / 1000),
					rateLimitMaxWaitSeconds: Math.round(pipelineTiming.maxRateLimitWaitMs / 1000),
				});
			}
		} else if (status >= 500 && mayRetryFailure()) {
			await sleep(pipelineTiming.retryBackoffMs[retriesAfterFailure++]);
			continue;
		}
		throw fail({
			statusCode: status,
			problem: problemFrom(response.body),
			rateLimitWaitSeconds: Math.round(rateLimitWaitedMs / 1000),
		});
	}
}

export interface AgencyInboxCredentials {
	apiKey: string;
	baseUrl: string;
	requestsPerMinute?: number;
	processesSharingKey?: number;
}

/** Base URL without trailing slashes, as the credential documents. */
export function normalizeBaseUrl(baseUrl: string): string {
	return String(baseUrl ?? '').replace(/\/+$/, '');
}

function asEnvelope(body: unknown): Envelope {
	const parsed = typeof body === 'string' ? parseJsonOrUndefined(body) : body;
	return parsed && typeof parsed === 'object' ? (parsed as Envelope) : {};
}

/**
 * One request through the pipeline with the node's credential; answers the parsed envelope. The
 * credential is decrypted once per request (or not at all when the caller passes it decrypted) and
 * handed to n8n's authentication: n8n 2.x takes a fresh expression isolate for each decryption.
 */
export async function requestEnvelope(
	context: PipelineContext,
	options: IHttpRequestOptions,
	itemIndex?: number,
	decrypted?: AgencyInboxCredentials,
): Promise<Envelope> {
	const method = (options.method ?? 'GET').toUpperCase() as IHttpRequestMethods;
	// Last line of defence: the nodes refuse such IDs before this; nothing is sent to another endpoint.
	if (pathIsRewritten(options.url)) {
		throw new NodeOperationError(context.getNode(), `Refused to send ${method} ${options.url}: it has a "." or ".." segment`, {
			itemIndex,
			description: 'n8n would resolve that segment and send the request to another endpoint of the service. Check the IDs given to this node.',
		});
	}
	const credentials = decrypted ?? (await context.getCredentials<AgencyInboxCredentials>(CREDENTIAL_TYPE, itemIndex));
	const baseURL = normalizeBaseUrl(credentials.baseUrl);
	// n8n reads only `data` of what it is given (its own fields are not needed to authenticate).
	const credentialsDecrypted = { id: '', name: '', type: CREDENTIAL_TYPE, data: { ...credentials } };
	const send = async () =>
		(await context.helpers.httpRequestWithAuthentication.call(
			context as IAllExecuteFunctions,
			CREDENTIAL_TYPE,
			{ ...options, baseURL, method, json: true, returnFullResponse: true, ignoreHttpStatusErrors: true },
			{ credentialsDecrypted },
		)) as IN8nHttpFullResponse;
	const response = await sendThroughPipeline(context, send, {
		method,
		path: options.url,
		idempotent: method === 'GET',
		budgetKey: budgetKeyFor(credentials.apiKey, baseURL),
		limit: shareOfBudget(Number(credentials.requestsPerMinute) || DEFAULT_REQUESTS_PER_MINUTE, credentials.processesSharingKey),
		order: runOrderOf(context),
		secret: credentials.apiKey,
		itemIndex,
	});
	const envelope = asEnvelope(response.body);
	const answeredAt = Date.parse(String((response.headers as IDataObject | undefined)?.date ?? ''));
	// On the envelope itself, hidden from its fields (a symbol, not enumerable): it goes where the envelope goes.
	if (!Number.isNaN(answeredAt)) Object.defineProperty(envelope, ANSWERED_AT, { value: answeredAt });
	return envelope;
}

/** When the service answered an envelope, by its own clock (its Date header, to the second). */
const ANSWERED_AT = Symbol('answered at, by the service clock');

/** The service's clock when it answered with `envelope`; undefined where it sent no Date header (the spec shows none). */
export function serviceTimeOf(envelope: object): number | undefined {
	return (envelope as { [ANSWERED_AT]?: number })[ANSWERED_AT];
}
