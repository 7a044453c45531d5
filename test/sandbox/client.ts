/** A tiny HTTP client for the sandbox tests (real HTTP over loopback). */
import { startSandbox, type Sandbox, type SandboxOptions } from '../../sandbox';

export interface JsonResponse<T = any> {
	status: number;
	headers: Headers;
	body: T;
}

async function toJson<T>(response: Response): Promise<JsonResponse<T>> {
	const text = await response.text();
	return { status: response.status, headers: response.headers, body: (text === '' ? undefined : JSON.parse(text)) as T };
}

export function apiClient(sandbox: Sandbox, apiKey: string | null = sandbox.apiKey) {
	const headers = (): Record<string, string> => (apiKey === null ? {} : { authorization: `Bearer ${apiKey}` });
	return {
		async get<T = any>(path: string, query: Record<string, string | number | undefined> = {}): Promise<JsonResponse<T>> {
			const url = new URL(sandbox.url + path);
			for (const [name, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(name, String(value));
			return toJson<T>(await fetch(url, { headers: headers() }));
		},
		async post<T = any>(path: string, body: unknown): Promise<JsonResponse<T>> {
			return toJson<T>(await fetch(sandbox.url + path, { method: 'POST', headers: { ...headers(), 'content-type': 'application/json' }, body: JSON.stringify(body) }));
		},
		async delete<T = any>(path: string): Promise<JsonResponse<T>> {
			return toJson<T>(await fetch(sandbox.url + path, { method: 'DELETE', headers: headers() }));
		},
	};
}

export function control(sandbox: Sandbox) {
	const call = async <T = any>(method: string, path: string, body?: unknown): Promise<JsonResponse<T>> =>
		toJson<T>(await fetch(`${sandbox.origin}/_sandbox${path}`, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) }));
	return {
		get: <T = any>(path: string) => call<T>('GET', path),
		post: <T = any>(path: string, body: unknown = {}) => call<T>('POST', path, body),
		delete: <T = any>(path: string) => call<T>('DELETE', path),
	};
}

export function expectProblem(response: JsonResponse, status: number, detailPattern?: RegExp): void {
	expect(response.status).toBe(status);
	expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
	expect(response.body).toEqual({ type: expect.any(String), title: expect.any(String), status, detail: expect.any(String), instance: expect.any(String) });
	if (detailPattern) expect(response.body.detail).toMatch(detailPattern);
}

/** Follows nextCursor until it is absent; returns every page. */
export async function allPages(client: ReturnType<typeof apiClient>, path: string, query: Record<string, string | number | undefined> = {}) {
	const pages: JsonResponse[] = [];
	let cursor: string | undefined;
	do {
		const page = await client.get(path, { ...query, pageCursor: cursor });
		expect(page.status).toBe(200);
		pages.push(page);
		cursor = page.body.meta.nextCursor;
		if (pages.length > 1000) throw new Error('pagination does not end');
	} while (cursor !== undefined);
	return pages;
}

/** A sandbox for the describe block this is called in: started before its tests, reset before each, closed after all. */
export function sandboxForSuite(options: SandboxOptions = { requestsPerMinute: 0 }) {
	let started: { sandbox: Sandbox; api: ReturnType<typeof apiClient>; ctl: ReturnType<typeof control> } | undefined;
	const get = () => {
		if (started === undefined) throw new Error('sandboxForSuite: the sandbox starts in beforeAll; use it inside tests and hooks.');
		return started;
	};
	beforeAll(async () => {
		const sandbox = await startSandbox(options);
		started = { sandbox, api: apiClient(sandbox), ctl: control(sandbox) };
	});
	afterAll(() => started?.sandbox.close());
	beforeEach(() => get().ctl.post('/reset'));
	return {
		get sandbox() {
			return get().sandbox;
		},
		get api() {
			return get().api;
		},
		get ctl() {
			return get().ctl;
		},
	};
}
