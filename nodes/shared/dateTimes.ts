import { DateTime } from 'luxon';

/** A date-time as n8n hands it over (ISO, SQL, RFC 2822, HTTP, a Date, a Luxon DateTime); a local time is read in `timeZone`. */
export function parseInZone(value: unknown, timeZone: string): DateTime | undefined {
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
