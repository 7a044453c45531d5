import { DateTime } from 'luxon';
import type { IExecuteSingleFunctions, IHttpRequestOptions, PreSendAction } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

function parseInZone(value: unknown, timeZone: string): DateTime | undefined {
	if (DateTime.isDateTime(value)) return value;
	if (value instanceof Date) return DateTime.fromJSDate(value, { zone: timeZone });
	if (typeof value !== 'string') return undefined;
	const text = value.trim();
	const parsers = [DateTime.fromISO, DateTime.fromSQL, DateTime.fromRFC2822, DateTime.fromHTTP];
	for (const parse of parsers) {
		const parsed = parse(text, { zone: timeZone });
		if (parsed.isValid) return parsed;
	}
	return undefined;
}

/**
 * A date-time as ISO-8601 with the offset of the given time zone. Local times without a zone
 * (as n8n's date picker hands them over) are read in that zone; undefined when it does not parse.
 */
export function toIsoWithOffset(value: unknown, timeZone: string): string | undefined {
	const parsed = parseInZone(value, timeZone);
	if (!parsed?.isValid) return undefined;
	return parsed.setZone(timeZone).toISO({ suppressMilliseconds: true }) ?? undefined;
}

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

/** A preSend that rejects a blank ID (resource locator or text) before any request. */
export function requireIdentifier(parameterName: string, label: string): PreSendAction {
	return async function rejectBlankIdentifier(this: IExecuteSingleFunctions, requestOptions: IHttpRequestOptions) {
		const value = this.getNodeParameter(parameterName, '', { extractValue: true });
		if (isBlank(value)) {
			throw new NodeOperationError(this.getNode(), `${label} is empty`, {
				itemIndex: this.getItemIndex(),
				description: `Choose a ${label.toLowerCase()} from the list or enter its ID.`,
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
