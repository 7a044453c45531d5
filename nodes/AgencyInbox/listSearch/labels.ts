/**
 * Labels of resource locator list items. n8n 2.x shows only an item's `name` (and a link icon for
 * its `url`), so the name carries what tells entries apart: topic or job, time, status, and the ID.
 */

/** `2026-05-31T14:02:11.000Z` as `2026-05-31 14:02 UTC`; anything else as it is. */
export function shortTime(value: unknown): string | undefined {
	if (typeof value !== 'string' || value === '') return undefined;
	const ms = Date.parse(value);
	if (Number.isNaN(ms)) return value;
	const iso = new Date(ms).toISOString();
	return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

/** The non-empty parts joined with " · ", then the ID in parentheses. */
export function listLabel(parts: Array<string | null | undefined>, id: string): string {
	const shown = parts.filter((part): part is string => typeof part === 'string' && part.trim() !== '');
	return shown.length > 0 ? `${shown.join(' · ')} (${id})` : id;
}
