/** Whether any of the texts contains the filter, ignoring case; no filter matches everything. */
export function matchesFilter(filter: string | undefined, ...texts: Array<string | undefined>): boolean {
	const wanted = filter?.trim().toLowerCase();
	if (!wanted) return true;
	return texts.some((text) => text?.toLowerCase().includes(wanted));
}
