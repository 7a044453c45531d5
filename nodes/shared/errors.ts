import type { INode, JsonObject } from 'n8n-workflow';
import { NodeApiError } from 'n8n-workflow';

import { runsAsTool } from './runsAsTool';

/** The service's error body (RFC 9457 problem object). */
export interface ProblemObject {
	type?: string;
	title?: string;
	status?: number;
	detail?: string;
	instance?: string;
}

/** What went wrong with one request, as the pipeline saw it. */
export interface RequestFailure {
	method: string;
	/** Path below the base URL, e.g. /v1/agency/proposals/prop-0001. */
	path: string;
	/** HTTP status, absent when no answer arrived. */
	statusCode?: number;
	problem?: ProblemObject;
	/** Code of a network error (ECONNREFUSED, ...). */
	networkErrorCode?: string;
	/** What went wrong when the failure is neither an answer nor a network error (an error raised inside n8n). */
	cause?: string;
	/** Seconds spent waiting on 429 answers before giving up. */
	rateLimitWaitSeconds?: number;
	/** The wait a 429 asked for (Retry-After), in seconds, when it was beyond what the node waits. */
	rateLimitRefusedWaitSeconds?: number;
	/** The most the node waits on 429 answers for one request, in seconds. */
	rateLimitMaxWaitSeconds?: number;
	/** How many times the request was sent. */
	attempts?: number;
}

const DEFAULT_TITLES: Record<string, string> = {
	'400': 'Bad request',
	'401': 'API key missing',
	'403': 'Access denied',
	'404': 'Not found',
	'429': 'Rate limit exceeded',
	'5xx': 'Service error',
};

/** Which record a path names, for 404 guidance: the segment after the collection name. */
const RECORD_PATHS: Array<{ pattern: RegExp; label: string }> = [
	{ pattern: /\/v1\/master-inbox\/rooms\/([^/]+)/, label: 'chat room' },
	{ pattern: /\/v1\/agency\/proposals\/([^/]+)/, label: 'proposal' },
	{ pattern: /\/v1\/bid-intents\/([^/]+)/, label: 'bid intent' },
];

/** The record a path refers to, e.g. { label: 'proposal', id: 'prop-0001' }. */
export function recordNamedByPath(path: string): { label: string; id: string } | undefined {
	for (const { pattern, label } of RECORD_PATHS) {
		const match = pattern.exec(path);
		if (match) return { label, id: safelyDecode(match[1]) };
	}
	return undefined;
}

function safelyDecode(segment: string): string {
	try {
		return decodeURIComponent(segment);
	} catch {
		return segment;
	}
}

function isMessageSend(failure: RequestFailure): boolean {
	return failure.method === 'POST' && /\/stories$/.test(failure.path);
}

/** A write: what it may have done although no answer says so, and what to do before repeating it. */
interface Write {
	mayHaveHappened: string;
	checkFirst: string;
}

function writeOf(failure: RequestFailure): Write | undefined {
	if (isMessageSend(failure)) {
		return { mayHaveHappened: 'the message may already have been sent', checkFirst: 'Check the room before sending it again' };
	}
	if (failure.method === 'DELETE' && /\/v1\/bid-intents\//.test(failure.path)) {
		return { mayHaveHappened: 'the bid intent may already be cancelled', checkFirst: 'Check the bid intent before cancelling it again' };
	}
	return undefined;
}

/** Network errors raised before a request could leave n8n: the service cannot have received it. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);

/** A write that left n8n and got no answer (connection dropped, timed out): its outcome is unknown. */
function writeWithUnknownOutcome(failure: RequestFailure): Write | undefined {
	const code = failure.networkErrorCode;
	return failure.statusCode === undefined && code !== undefined && !NOT_SENT_CODES.has(code) ? writeOf(failure) : undefined;
}

function isCursorForAnotherOrdering(problem: ProblemObject | undefined): boolean {
	const text = `${problem?.title ?? ''} ${problem?.detail ?? ''}`.toLowerCase();
	return text.includes('cursor') || text.includes('ordering');
}

/** What the user can do about a failure, per HTTP status. */
export function guidanceFor(failure: RequestFailure): string {
	const status = failure.statusCode;
	const write = writeOf(failure);
	if (status === undefined && failure.networkErrorCode === undefined) {
		const outcome = write ? ` It is not known whether the request left n8n, so ${write.mayHaveHappened}: ${write.checkFirst.toLowerCase()}.` : '';
		return `n8n raised this error while it prepared or sent the request, so no answer of the service reached the node.${outcome} If it names the address (an invalid URL or protocol), check the Base URL in the Agency Inbox API credential; otherwise run the node again, and if the error repeats, look it up in n8n's log and in n8n's known issues for your n8n version.`;
	}
	const unknownOutcome = writeWithUnknownOutcome(failure);
	if (unknownOutcome) {
		return `The connection ended before the service answered (${failure.networkErrorCode}), after the request had left n8n, so it is not known whether the service processed it. The node did not send it again: only a "too many requests" answer proves that a request was not processed. ${unknownOutcome.checkFirst}.`;
	}
	if (status === undefined) {
		const notSent = write ? ' The request did not reach the service, so nothing was changed.' : '';
		return `No answer came from the service (${failure.networkErrorCode}, tried ${failure.attempts ?? 1} times).${notSent} Check the Base URL in the Agency Inbox API credential and that the service is reachable from n8n.`;
	}
	if (status === 400 && isCursorForAnotherOrdering(failure.problem)) {
		return 'The page cursor belongs to another ordering: Updated Since was added or removed while paging. Paging must restart without a cursor; run the node again.';
	}
	if (status === 400) {
		return 'The service rejected a parameter of this operation (named above). Correct it and run the node again.';
	}
	if (status === 401) {
		return 'No API key reached the service. Paste the key from Integrations into API Key in the Agency Inbox API credential.';
	}
	if (status === 403 && isMessageSend(failure)) {
		return 'Sending needs an active Master Inbox subscription (or trial) and a freelancer who is authorized in this room. Otherwise check the API Key in the credential.';
	}
	if (status === 403) {
		return 'The service rejected the API key. Create a new key under Integrations and paste it into API Key in the Agency Inbox API credential.';
	}
	if (status === 404) {
		const record = recordNamedByPath(failure.path);
		return record
			? `No ${record.label} with ID "${record.id}" exists for this agency. Check the ID, or pick the ${record.label} from the list.`
			: 'Nothing exists at this address. Check the Base URL in the credential (API host followed by /service).';
	}
	if (status === 429 && failure.rateLimitRefusedWaitSeconds !== undefined) {
		return `${rateLimitGaveUp(failure)} Run the node again after that time. If this happens often, other workflows probably use the same API key: run them less often.`;
	}
	if (status === 429) {
		return `The service still answered "too many requests" after waiting ${failure.rateLimitWaitSeconds ?? 0} s. Other workflows probably use the same API key: run them less often, or raise Requests per Minute in the credential only if the service raised your limit.`;
	}
	if (status >= 500 && write) {
		return `The service failed while handling the request, but ${write.mayHaveHappened}. It was not sent again (no duplicates). ${write.checkFirst}.`;
	}
	if (status >= 500) {
		return `The service failed to process the request (sent ${failure.attempts ?? 1} times). Try again later.`;
	}
	return 'The service could not process the request.';
}

/** Why the node stopped waiting: the service asked for a longer wait than the node's cap. */
function rateLimitGaveUp(failure: RequestFailure): string {
	const waited = failure.rateLimitWaitSeconds ? ` after waiting ${failure.rateLimitWaitSeconds} s` : '';
	return `The service answered "too many requests" and asked to wait ${failure.rateLimitRefusedWaitSeconds} s (Retry-After), longer than the ${failure.rateLimitMaxWaitSeconds ?? 120} s this node waits at most, so it gave up${waited} without waiting that long.`;
}

/**
 * What a model should do about a failure, in one or two sentences. A failed tool call hands the
 * model only the error's message (n8n 2.x: `{error: message}`), so in tool runs this goes there.
 */
export function toolGuidanceFor(failure: RequestFailure): string {
	const status = failure.statusCode;
	if (status === 400 && isCursorForAnotherOrdering(failure.problem)) {
		return 'The page cursor no longer fits the query. Call the tool again with the same arguments.';
	}
	if (status === 400) {
		return 'An argument was rejected (see above). Correct that argument and call again; do not repeat the same call.';
	}
	if (status === 401 || (status === 403 && !isMessageSend(failure))) {
		return 'The API key of this tool is missing or invalid. Do not retry: tell the user to fix the Agency Inbox API credential in n8n.';
	}
	if (status === 403) {
		return 'Nothing was sent. The freelancerUid must be an agency member taking part in this room (see participants in the chat room list), and the agency needs an active Master Inbox subscription. Retry only with such a freelancer; otherwise tell the user.';
	}
	if (status === 404) {
		const record = recordNamedByPath(failure.path);
		return record
			? `No ${record.label} has the ID "${record.id}". Do not guess IDs: take it from the ${record.label === 'bid intent' ? 'bid_intent.scheduled event' : `list of ${record.label}s`} and call again.`
			: 'The service address is wrong. Do not retry: tell the user to check the Base URL of the Agency Inbox API credential.';
	}
	if (status === 429 && failure.rateLimitRefusedWaitSeconds !== undefined) {
		return `${rateLimitGaveUp(failure)} Nothing was done. Do not retry now; try again in ${failure.rateLimitRefusedWaitSeconds} s or tell the user.`;
	}
	if (status === 429) {
		return `Rate limit: the service still refused after ${failure.rateLimitWaitSeconds ?? 0} s of waiting. Nothing was done. Make fewer calls; try again in a minute.`;
	}
	return guidanceFor(failure);
}

function statusGroup(status: number): string {
	return status >= 500 ? '5xx' : String(status);
}

/** The headline: the service's title and detail when it sent them. */
export function headlineFor(failure: RequestFailure): string {
	if (failure.statusCode === undefined && failure.networkErrorCode === undefined) {
		return `The request to the Agency Inbox service failed in n8n: ${failure.cause ?? 'unknown error'}`;
	}
	const unknownOutcome = writeWithUnknownOutcome(failure);
	if (unknownOutcome) {
		return `No answer from the Agency Inbox service: ${unknownOutcome.mayHaveHappened}. ${unknownOutcome.checkFirst}.`;
	}
	if (failure.statusCode === undefined) return 'Could not reach the Agency Inbox service';
	const title = failure.problem?.title || DEFAULT_TITLES[statusGroup(failure.statusCode)] || 'Request failed';
	const detail = failure.problem?.detail;
	return detail ? `${title}: ${detail}` : title;
}

/** Replaces every occurrence of the secret, so an echoed key never reaches an error message. */
export function withoutSecret(text: string, secret: string | undefined): string {
	return secret ? text.split(secret).join('***') : text;
}

/**
 * The HTTP status of a failed request, read where toNodeApiError puts it (`httpCode`); undefined for a
 * network failure (n8n 1.x keeps its code there too, ECONNRESET ...) and for any other error.
 */
export function httpStatusOf(error: unknown): number | undefined {
	const status = Number((error as { httpCode?: unknown } | null | undefined)?.httpCode);
	return Number.isInteger(status) && status >= 100 && status <= 599 ? status : undefined;
}

/**
 * For a request that got no answer, the network code toNodeApiError kept (ETIMEDOUT, ECONNRESET, ...)
 * and whether the request reached the service at all (not for a refused connection or a failed DNS
 * lookup); undefined for an answer or any other error.
 */
export function unansweredRequestOf(error: unknown): { code: string; sent: boolean } | undefined {
	const code = (error as { errorResponse?: { networkErrorCode?: unknown } } | null | undefined)?.errorResponse?.networkErrorCode;
	return typeof code === 'string' ? { code, sent: !NOT_SENT_CODES.has(code) } : undefined;
}

/**
 * The code of a network-level failure (ECONNRESET, EAI_AGAIN, ...), found on the error or its cause;
 * n8n 1.x wraps it in a NodeApiError that keeps the code only as `httpCode`. Node's own ERR_* codes
 * (ERR_INVALID_URL, ...) are not network failures.
 */
export function networkErrorCodeOf(error: unknown): string | undefined {
	const isNetworkCode = (code: unknown): code is string => typeof code === 'string' && /^E(?!RR_)[A-Z_]+$/.test(code);
	let current = error as { code?: unknown; httpCode?: unknown; cause?: unknown } | undefined;
	for (let depth = 0; current && depth < 4; depth++) {
		if (isNetworkCode(current.code)) return current.code;
		if (isNetworkCode(current.httpCode)) return current.httpCode;
		current = current.cause as typeof current;
	}
	return undefined;
}

/** The problem object (or network failure) as NodeApiError with the HTTP code and guidance. */
export function toNodeApiError(
	node: INode,
	failure: RequestFailure,
	secret?: string,
	itemIndex?: number,
): NodeApiError {
	const description = withoutSecret(guidanceFor(failure), secret);
	// A model sees only the message: in tool runs it carries short guidance for the model too.
	const headline = headlineFor(failure);
	const message = withoutSecret(runsAsTool(node) ? `${headline.replace(/[.\s]+$/, '')}. ${toolGuidanceFor(failure)}` : headline, secret);
	const errorResponse: JsonObject = {
		message,
		description,
		method: failure.method,
		path: withoutSecret(failure.path, secret),
		...(failure.problem ? { problem: JSON.parse(withoutSecret(JSON.stringify(failure.problem), secret)) } : {}),
		// Not under `code`: NodeApiError would take a network code for the HTTP code and show its generic text.
		...(failure.networkErrorCode ? { networkErrorCode: failure.networkErrorCode } : {}),
	};
	const error = new NodeApiError(node, errorResponse, {
		message,
		description,
		httpCode: failure.statusCode === undefined ? undefined : String(failure.statusCode),
		itemIndex,
	});
	// NodeApiError replaces a message naming a common error code (ECONNRESET, ENOENT, ...) with n8n's
	// generic text ("You can retry the request immediately"), which is wrong for a write: keep ours.
	error.message = message;
	error.description = description;
	return error;
}
