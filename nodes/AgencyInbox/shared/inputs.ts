import type { IExecuteSingleFunctions, IHttpRequestOptions, PreSendAction } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { toIsoWithOffset } from '../../shared/dateTimes';

function isBlank(value: unknown): boolean {
	return value === undefined || value === null || String(value).trim() === '';
}

/** preSend: Updated Since in the workflow's time zone with an offset; rejects what does not parse. */
export async function sendUpdatedSinceWithOffset(
	this: IExecuteSingleFunctions,
	requestOptions: IHttpRequestOptions,
): Promise<IHttpRequestOptions> {
	const qs = { ...(requestOptions.qs ?? {}) };
	if (isBlank(qs.updatedSince)) {
		delete qs.updatedSince;
		return { ...requestOptions, qs };
	}
	const iso = toIsoWithOffset(qs.updatedSince, this.getTimezone());
	if (!iso) {
		throw new NodeOperationError(this.getNode(), `Updated Since "${String(qs.updatedSince)}" is not a date and time`, {
			itemIndex: this.getItemIndex(),
			description: 'Pick a date, or give ISO-8601 such as 2025-05-01T09:30:00 (read in the workflow\'s time zone) or 2025-05-01T09:30:00+02:00.',
		});
	}
	return { ...requestOptions, qs: { ...qs, updatedSince: iso } };
}

/**
 * IDs that cannot be one segment of a request's path: n8n's HTTP client resolves "." and ".." (which
 * encodeURIComponent leaves as they are) and would send the request to another endpoint. Everything
 * else, once encoded, arrives as one segment; "%2e%2e" arrives as the text "%2e%2e".
 */
const DOT_SEGMENTS = new Set(['.', '..']);

/**
 * A preSend that rejects, before any request, a blank ID (resource locator or text) and, for an ID
 * that goes into the path, one that cannot be a path segment. Typed, mapped or chosen by the AI Agent.
 */
export function requireIdentifier(parameterName: string, label: string, placement: 'path' | 'body' = 'path'): PreSendAction {
	return async function rejectUnusableIdentifier(this: IExecuteSingleFunctions, requestOptions: IHttpRequestOptions) {
		const value = this.getNodeParameter(parameterName, '', { extractValue: true });
		if (isBlank(value)) {
			throw new NodeOperationError(this.getNode(), `${label} is empty`, {
				itemIndex: this.getItemIndex(),
				description: `Choose a ${label.toLowerCase()} from the list or enter its ID.`,
			});
		}
		// String(): what encodeURIComponent turns the value into (an array ['..'] becomes '..').
		if (placement === 'path' && DOT_SEGMENTS.has(String(value))) {
			throw new NodeOperationError(this.getNode(), `${label} "${String(value)}" is not an ID: nothing was sent`, {
				itemIndex: this.getItemIndex(),
				description: `"." and ".." cannot be IDs: n8n would read them as parts of the address and send the request to another endpoint of the service. Give the real ID as the service returns it, or check the expression or field that supplies ${label}.`,
			});
		}
		return requestOptions;
	};
}

/** preSend: Send Message needs text; a blank message is never sent. */
export async function rejectBlankMessage(
	this: IExecuteSingleFunctions,
	requestOptions: IHttpRequestOptions,
): Promise<IHttpRequestOptions> {
	const body = (requestOptions.body ?? {}) as { message?: unknown };
	if (isBlank(body.message)) {
		throw new NodeOperationError(this.getNode(), 'Message is empty', {
			itemIndex: this.getItemIndex(),
			description: 'Enter the text to send, or map it from a previous node.',
		});
	}
	return requestOptions;
}
