/** A call to the sandbox's control endpoints (/_sandbox/…, no auth), for tests and benchmarks; throws unless it succeeds. */
export async function sandboxControl<T>(origin: string, method: string, route: string, body?: unknown): Promise<T> {
	const response = await fetch(`${origin}/_sandbox/${route}`, {
		method,
		headers: body === undefined ? undefined : { 'content-type': 'application/json' },
		body: body === undefined ? undefined : JSON.stringify(body),
	});
	if (!response.ok) throw new Error(`${method} /_sandbox/${route}: ${response.status} ${await response.text()}`);
	return (await response.json()) as T;
}
