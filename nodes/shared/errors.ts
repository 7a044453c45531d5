import type { INode, JsonObject } from 'n8n-workflow';
import { NodeApiError } from 'n8n-workflow';

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
	/** Seconds spent waiting on 429 answers before giving up. */
	rateLimitWaitSeconds?: number;
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

function isCursorForAnotherOrdering(problem: ProblemObject | undefined): boolean {
	const text = `${problem?.title ?? ''} ${problem?.detail ?? ''}`.toLowerCase();
	return text.includes('cursor') || text.includes('ordering');
}

/** What the user can do about a failure, per HTTP status. */
export function guidanceFor(failure: RequestFailure): string {
	const status = failure.statusCode;
	if (status === undefined) {
		return 'No answer came from the service. Check the Base URL in the Agency Inbox API credential and that the service is reachable from n8n.';
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
	if (status === 429) {
		return `The service still answered "too many requests" after waiting ${failure.rateLimitWaitSeconds ?? 0} s. Other workflows probably use the same API key: run them less often, or raise Requests per Minute in the credential only if the service raised your limit.`;
	}
	if (status >= 500 && isMessageSend(failure)) {
		return 'The service failed while handling the message. It may have been stored anyway, so it was not sent again (no duplicates): check the room before sending it again.';
	}
	if (status >= 500) {
		return `The service failed to process the request (sent ${failure.attempts ?? 1} times). Try again later.`;
	}
	return 'The service could not process the request.';
}

function statusGroup(status: number): string {
	return status >= 500 ? '5xx' : String(status);
}

/** The headline: the service's title and detail when it sent them. */
export function headlineFor(failure: RequestFailure): string {
	if (failure.statusCode === undefined) {
		return `Could not reach the Agency Inbox service (${failure.networkErrorCode ?? 'network error'})`;
	}
	const title = failure.problem?.title || DEFAULT_TITLES[statusGroup(failure.statusCode)] || 'Request failed';
	const detail = failure.problem?.detail;
	return detail ? `${title}: ${detail}` : title;
}

/** Replaces every occurrence of the secret, so an echoed key never reaches an error message. */
export function withoutSecret(text: string, secret: string | undefined): string {
	return secret ? text.split(secret).join('***') : text;
}

/** The problem object (or network failure) as NodeApiError with the HTTP code and guidance. */
export function toNodeApiError(
	node: INode,
	failure: RequestFailure,
	secret?: string,
	itemIndex?: number,
): NodeApiError {
	const message = withoutSecret(headlineFor(failure), secret);
	const description = withoutSecret(guidanceFor(failure), secret);
	const errorResponse: JsonObject = {
		message,
		description,
		method: failure.method,
		path: withoutSecret(failure.path, secret),
		...(failure.problem ? { problem: JSON.parse(withoutSecret(JSON.stringify(failure.problem), secret)) } : {}),
		...(failure.networkErrorCode ? { code: failure.networkErrorCode } : {}),
	};
	return new NodeApiError(node, errorResponse, {
		message,
		description,
		httpCode: failure.statusCode === undefined ? undefined : String(failure.statusCode),
		itemIndex,
	});
}
