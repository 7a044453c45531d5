/**
 * The service's client: what the nodes ask of the service (paths, query parameters, the optional ones
 * sent for economy, page cursors), each request sent through the pipeline (transport.ts).
 */
import type { IDataObject, IHttpRequestMethods, IHttpRequestOptions } from 'n8n-workflow';

import type { Envelope } from './pagination';
import { collectRecords } from './pagination';
import { httpStatusOf } from './errors';
import { processStore } from './processMemory';
import { budgetKeyFor } from './requestBudget';
import { CREDENTIAL_TYPE, normalizeBaseUrl, requestEnvelope, type AgencyInboxCredentials, type PipelineContext } from './transport';

/** Test-only timing: tests shorten it; n8n never changes it. */
export const serviceClientTiming = {
	/** How long a refusal of an optional query parameter holds; then the parameter is sent again. */
	refusalKeptMs: 60 * 60 * 1000,
};

/**
 * Optional query parameters the service refused (a 400), per API key at a service, endpoint and
 * parameter: a conclusion that holds for `refusalKeptMs`. Then the parameter is sent again: a service
 * that takes it by then is used as it is, and one that still refuses costs one more request (the same
 * one again without it) and is believed for another while. Only parameters sent for economy (the spec
 * does not name them for that endpoint, e.g. `pageSize` on the member list) land here: the node is
 * correct without them.
 */
const refusals = processStore<true>({
	name: 'optional query parameters the service refused',
	belongsTo: 'an API key at a service (every workflow, node and URL using it), an endpoint and a parameter',
	lifetime: 'an hour after the refusal; then the parameter is sent again',
	keptMs: () => serviceClientTiming.refusalKeptMs,
	renewedOnUse: false,
	maxEntries: 10_000,
});

/** An endpoint whatever record it names: /v1/master-inbox/rooms/{id}/stories. */
const endpointOf = (method: string, path: string) => `${method} ${path.replace(/(\/(?:rooms|proposals|bid-intents)\/)[^/]+/g, '$1{id}')}`;

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
	 * parameters the 400 named (all, if it named none) are not sent to that endpoint for `refusalKeptMs`.
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
	const apiKey = { apiKey: budgetKeyFor(credentials.apiKey, normalizeBaseUrl(credentials.baseUrl)) };
	const endpoint = endpointOf(method, path);
	const optional = Object.keys(optionalQs).filter((name) => !refusals.get(apiKey, `${endpoint} ${name}`));
	const withOptional = { ...Object.fromEntries(optional.map((name) => [name, optionalQs[name]])), ...qs };
	const first = await requestEnvelope(this, { method, url: path, qs: withOptional, body }, undefined, credentials).then(
		(answer) => ({ answer }),
		(failure: unknown) => ({ failure }),
	);
	if ('answer' in first) return first.answer;
	if (optional.length === 0 || httpStatusOf(first.failure) !== 400) throw first.failure;
	const answer = await requestEnvelope(this, { method, url: path, qs, body }, undefined, credentials);
	const refused = namedIn(first.failure, optional);
	for (const name of refused) refusals.set(apiKey, true, `${endpoint} ${name}`);
	const minutes = Math.round(serviceClientTiming.refusalKeptMs / 60_000);
	this.logger?.warn(`Agency Inbox: the service refused ${refused.join(', ')} on ${endpoint}; not sent there for the next ${minutes} minutes (the service's own page size applies)`);
	return answer;
}

/** The request of the given page: the same query plus pageCursor. */
export function withPageCursor(options: IHttpRequestOptions, pageCursor: string | undefined): IHttpRequestOptions {
	if (pageCursor === undefined) return options;
	return { ...options, qs: { ...(options.qs ?? {}), pageCursor } };
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
