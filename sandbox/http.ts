/** Small HTTP helpers: JSON bodies, problem objects and the response value handlers return. */
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface ApiResponse {
	status: number;
	body?: unknown;
	headers?: Record<string, string>;
	/** Close the connection without answering (a `drop` fault). */
	drop?: boolean;
}

const PROBLEM_TITLES: Record<number, string> = {
	400: 'Bad Request',
	401: 'Unauthorized',
	403: 'Forbidden',
	404: 'Not Found',
	405: 'Method Not Allowed',
	429: 'Too Many Requests',
	500: 'Internal Server Error',
	502: 'Bad Gateway',
	503: 'Service Unavailable',
	504: 'Gateway Timeout',
};

/** A problem object (RFC 9457 style) as the spec's Errors section describes. */
export function problem(status: number, detail: string, instance: string, headers?: Record<string, string>): ApiResponse {
	const title = PROBLEM_TITLES[status] ?? (status >= 500 ? 'Server Error' : 'Error');
	return {
		status,
		headers: { 'content-type': 'application/problem+json', ...headers },
		body: { type: `https://agency-inbox.example.invalid/problems/${status}`, title, status, detail, instance },
	};
}

export class BadRequest extends Error {}

export function ok(data: unknown): ApiResponse {
	return { status: 200, body: { data } };
}

export function send(res: ServerResponse, response: ApiResponse): void {
	const text = response.body === undefined ? '' : JSON.stringify(response.body);
	res.writeHead(response.status, {
		'content-type': 'application/json; charset=utf-8',
		...response.headers,
		'content-length': Buffer.byteLength(text),
	});
	res.end(text);
}

export async function readBody(req: IncomingMessage): Promise<string> {
	const chunks: Buffer[] = [];
	for await (const chunk of req) chunks.push(chunk as Buffer);
	return Buffer.concat(chunks).toString('utf8');
}

/** Parses a JSON object body; an empty body is `{}`; anything else throws BadRequest. */
export function parseJsonObject(text: string): Record<string, unknown> {
	if (text.trim() === '') return {};
	let parsed: unknown;
	try {
		parsed = JSON.parse(text);
	} catch {
		throw new BadRequest('The request body is not valid JSON.');
	}
	if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new BadRequest('The request body must be a JSON object.');
	return parsed as Record<string, unknown>;
}
