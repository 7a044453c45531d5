/** HTTP dispatch: /service/v1/* through auth, rate limit and fault injection; /_sandbox/* to the control endpoints. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { handleControl, type ControlContext } from './control';
import { BadRequest, parseJsonObject, problem, readBody, send, type ApiResponse } from './http';
import { handleApi } from './routes';

export const BASE_PATH = '/service';
const CONTROL_PREFIX = '/_sandbox';

export interface ServerContext extends ControlContext {
	/** Valid API keys mapped to the key id that logs show instead of the key. */
	keyIds: Map<string, string>;
}

type Auth = { keyId: string; rejection?: ApiResponse };

function authenticate(ctx: ServerContext, req: IncomingMessage, instance: string): Auth {
	const header = req.headers.authorization;
	const match = header === undefined ? null : /^Bearer\s+(\S.*)$/i.exec(header.trim());
	if (!match) return { keyId: 'none', rejection: problem(401, 'The API key is missing: send the header "Authorization: Bearer <API key>".', instance) };
	const keyId = ctx.keyIds.get(match[1].trim());
	if (keyId === undefined) return { keyId: 'unknown', rejection: problem(403, 'The API key is invalid.', instance) };
	return { keyId };
}

async function handleServiceRequest(ctx: ServerContext, req: IncomingMessage, url: URL): Promise<ApiResponse> {
	const { core } = ctx;
	const method = (req.method ?? 'GET').toUpperCase();
	const path = url.pathname.slice(BASE_PATH.length) || '/';
	const instance = url.pathname;
	const bodyText = await readBody(req);
	const log = (keyId: string, response: ApiResponse): ApiResponse => {
		core.requests.push({ method, path, query: Object.fromEntries(url.searchParams), apiKey: keyId, status: response.status, at: new Date().toISOString() });
		if (core.requests.length > 100_000) core.requests.shift();
		return response;
	};

	const auth = authenticate(ctx, req, instance);
	if (auth.rejection) return log(auth.keyId, auth.rejection);
	const admission = core.limiter.admit(auth.keyId);
	if (!admission.admitted) {
		const seconds = String(admission.retryAfterSeconds);
		return log(auth.keyId, problem(429, `Rate limit of ${core.limiter.requestsPerMinute} requests per minute exceeded; retry after ${seconds} s.`, instance, { 'retry-after': seconds }));
	}

	const fault = core.takeFault(method, path, url.pathname, url.searchParams.has('pageCursor'));
	const injected = (): ApiResponse => {
		if (fault!.kind === 'drop') return { status: 0, drop: true };
		// A 429 answer does not count against the budget, as with the real limiter.
		if (fault!.status === 429) core.limiter.refund(auth.keyId);
		const headers = fault!.retryAfter !== undefined ? { 'retry-after': String(fault!.retryAfter) } : undefined;
		return problem(fault!.status, `Injected fault: status ${fault!.status}.`, instance, headers);
	};
	if (fault && !fault.afterProcessing) return log(auth.keyId, injected());

	let response: ApiResponse;
	try {
		response = handleApi({ state: core.state, clock: core.clock, defaultPageSize: core.settings.pageSize, maxPageSize: core.settings.maxPageSize, variants: core.variants }, { method, path, instance, query: url.searchParams, body: method === 'GET' || method === 'DELETE' ? {} : parseJsonObject(bodyText) });
	} catch (error) {
		if (!(error instanceof BadRequest)) throw error;
		response = problem(400, error.message, instance);
	}
	if (fault?.kind === 'hold') {
		await core.holdAnswer(fault.holdMs ?? 0);
		return log(auth.keyId, response);
	}
	return log(auth.keyId, fault ? injected() : response);
}

async function handleControlRequest(ctx: ServerContext, req: IncomingMessage, url: URL): Promise<ApiResponse> {
	const method = (req.method ?? 'GET').toUpperCase();
	const route = url.pathname.slice(CONTROL_PREFIX.length).replace(/\/+$/, '');
	try {
		return handleControl(ctx, method, route, parseJsonObject(await readBody(req)), url.pathname);
	} catch (error) {
		if (error instanceof BadRequest) return problem(400, error.message, url.pathname);
		throw error;
	}
}

export function createRequestHandler(ctx: ServerContext) {
	return (req: IncomingMessage, res: ServerResponse): void => {
		const url = new URL(req.url ?? '/', 'http://sandbox.invalid');
		let handling: Promise<ApiResponse>;
		if (url.pathname === BASE_PATH || url.pathname.startsWith(`${BASE_PATH}/`)) handling = handleServiceRequest(ctx, req, url);
		else if (url.pathname.startsWith(`${CONTROL_PREFIX}/`)) handling = handleControlRequest(ctx, req, url);
		else handling = Promise.resolve(problem(404, `Nothing at ${url.pathname}; the API is under ${BASE_PATH}/v1 and control endpoints under ${CONTROL_PREFIX}/.`, url.pathname));
		handling
			.catch((error: Error) => problem(500, `Sandbox error: ${error.message}`, url.pathname))
			// The Date header from the service's own clock, as a host sets it from its clock.
			.then((response) => (response.drop ? res.destroy() : send(res, { ...response, headers: { date: new Date(ctx.core.clock.peekMs()).toUTCString(), ...response.headers } })))
			.catch(() => res.destroy());
	};
}
