/**
 * The one request pipeline: every request of every Agency Inbox node goes through here.
 * Budget per API key, 429 waits, retries of reads, cursor paging, problem objects as NodeApiError.
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
import { toNodeApiError } from './errors';
import type { Envelope } from './pagination';
import { collectRecords } from './pagination';
import { budgetKeyFor, RollingWindowBudget, shareOfBudget } from './requestBudget';
import { runOrderOf, type RunContext } from './runOrder';

export { toNodeApiError } from './errors';
export { collectRecords, pagesOf } from './pagination';
export type { Envelope, FetchPage } from './pagination';
export { budgetKeyFor } from './requestBudget';
export { simplifyProposal } from './simplifyProposal';

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

/** Module-level, so every execution in the n8n process shares one budget per API key. */
export const requestBudget = new RollingWindowBudget(pipelineTiming);

/** Only for tests: forget every key's history so tests do not share a budget. */
export function resetRequestBudgets(): void {
	requestBudget.clear();
}

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

/**
 * The code of a network-level failure (ECONNRESET, EAI_AGAIN, ...), found on the error or its cause;
 * n8n 1.x wraps it in a NodeApiError that keeps the code only as `httpCode`. Node's own ERR_* codes
 * (ERR_INVALID_URL, ...) are not network failures.
 */
function networkErrorCodeOf(error: unknown): string | undefined {
	const isNetworkCode = (code: unknown): code is string => typeof code === 'string' && /^E(?!RR_)[A-Z_]+$/.test(code);
	let current = error as { code?: unknown; httpCode?: unknown; cause?: unknown } | undefined;
	for (let depth = 0; current && depth < 4; depth++) {
		if (isNetworkCode(current.code)) return current.code;
		if (isNetworkCode(current.httpCode)) return current.httpCode;
		current = current.cause as typeof current;
	}
	return undefined;
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

interface AgencyInboxCredentials {
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

/** One request through the pipeline with the node's credential; answers the parsed envelope. */
export async function requestEnvelope(
	context: PipelineContext,
	options: IHttpRequestOptions,
	itemIndex?: number,
): Promise<Envelope> {
	const method = (options.method ?? 'GET').toUpperCase() as IHttpRequestMethods;
	// Last line of defence: the nodes refuse such IDs before this; nothing is sent to another endpoint.
	if (pathIsRewritten(options.url)) {
		throw new NodeOperationError(context.getNode(), `Refused to send ${method} ${options.url}: it has a "." or ".." segment`, {
			itemIndex,
			description: 'n8n would resolve that segment and send the request to another endpoint of the service. Check the IDs given to this node.',
		});
	}
	const credentials = await context.getCredentials<AgencyInboxCredentials>(CREDENTIAL_TYPE, itemIndex);
	const baseURL = normalizeBaseUrl(credentials.baseUrl);
	const send = async () =>
		(await context.helpers.httpRequestWithAuthentication.call(context as IAllExecuteFunctions, CREDENTIAL_TYPE, {
			...options,
			baseURL,
			method,
			json: true,
			returnFullResponse: true,
			ignoreHttpStatusErrors: true,
		})) as IN8nHttpFullResponse;
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
	return asEnvelope(response.body);
}

/** The request of the given page: the same query plus pageCursor. */
export function withPageCursor(options: IHttpRequestOptions, pageCursor: string | undefined): IHttpRequestOptions {
	if (pageCursor === undefined) return options;
	return { ...options, qs: { ...(options.qs ?? {}), pageCursor } };
}

/**
 * Query parameters the service refused, per API key and endpoint, for the life of the process. Only
 * parameters sent for economy (the spec does not name them for that endpoint, e.g. `pageSize` on the
 * member list) land here: the node is correct without them.
 */
const refusedParameters = new Map<string, Set<string>>();

/** Only for tests: send every optional parameter again. */
export function forgetRefusedParameters(): void {
	refusedParameters.clear();
}

/** An endpoint whatever record it names: /v1/master-inbox/rooms/{id}/stories. */
const endpointOf = (method: string, path: string) => `${method} ${path.replace(/(\/(?:rooms|proposals|bid-intents)\/)[^/]+/g, '$1{id}')}`;

const isBadRequest = (error: unknown) => String((error as { httpCode?: unknown } | undefined)?.httpCode ?? '') === '400';

/** The parameters among `names` that a refusal names (its message or the service's detail); all of them if it names none. */
function namedIn(error: unknown, names: string[]): string[] {
	const failure = error as { message?: string; description?: string | null };
	const text = `${failure?.message ?? ''} ${failure?.description ?? ''}`;
	const named = names.filter((name) => text.includes(name));
	return named.length > 0 ? named : names;
}

export interface ApiRequest {
	qs?: IDataObject;
	body?: IDataObject;
	/**
	 * Query parameters sent for economy only, where the spec does not name them (a page size). A 400
	 * to a request carrying them is answered by sending it again without them; if that succeeds, the
	 * parameters the 400 named (all, if it named none) are not sent to that endpoint again.
	 */
	optionalQs?: IDataObject;
}

/** For programmatic nodes (triggers, list search): one request, the parsed envelope back. */
export async function agencyInboxApiRequest(
	this: PipelineContext & { logger?: { warn(message: string): void } },
	method: IHttpRequestMethods,
	path: string,
	{ qs, body, optionalQs = {} }: ApiRequest = {},
): Promise<Envelope> {
	const credentials = await this.getCredentials<AgencyInboxCredentials>(CREDENTIAL_TYPE);
	const endpoint = `${budgetKeyFor(credentials.apiKey, normalizeBaseUrl(credentials.baseUrl))} ${endpointOf(method, path)}`;
	const refused = refusedParameters.get(endpoint) ?? new Set<string>();
	const optional = Object.keys(optionalQs).filter((name) => !refused.has(name));
	const withOptional = { ...Object.fromEntries(optional.map((name) => [name, optionalQs[name]])), ...qs };
	const first = await requestEnvelope(this, { method, url: path, qs: withOptional, body }).then(
		(answer) => ({ answer }),
		(failure: unknown) => ({ failure }),
	);
	if ('answer' in first) return first.answer;
	if (optional.length === 0 || !isBadRequest(first.failure)) throw first.failure;
	const answer = await requestEnvelope(this, { method, url: path, qs, body });
	for (const name of namedIn(first.failure, optional)) refused.add(name);
	refusedParameters.set(endpoint, refused);
	this.logger?.warn(`Agency Inbox: the service refused ${[...refused].join(', ')} on ${endpointOf(method, path)}; no longer sent there (the service's own page size applies)`);
	return answer;
}

/** For programmatic nodes: every record of a list (up to `limit`), following the cursors. */
export async function agencyInboxApiPaginate(
	this: PipelineContext & { logger?: { warn(message: string): void } },
	path: string,
	{ qs = {}, optionalQs }: Pick<ApiRequest, 'qs' | 'optionalQs'> = {},
	limit = Infinity,
): Promise<IDataObject[]> {
	return await collectRecords(
		async (pageCursor) => await agencyInboxApiRequest.call(this, 'GET', path, { qs: { ...qs, ...(pageCursor ? { pageCursor } : {}) }, optionalQs }),
		limit,
	);
}
