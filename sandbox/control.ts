/** Control endpoints under /_sandbox/ (no auth): drive changes, inject faults, read what the sandbox saw. */
import { applyChange, defaultEventData } from './changes';
import type { Fault, SandboxCore } from './core';
import { BadRequest, problem, type ApiResponse } from './http';
import { idView } from './marketplaceIds';
import type { Simulator } from './simulator';
import { checkVariants } from './variants';

export interface ControlContext {
	core: SandboxCore;
	simulator: Simulator;
}

const json = (body: unknown, status = 200): ApiResponse => ({ status, body });

function toFault(body: Record<string, unknown>): Fault {
	const { kind = 'status', method, pathPrefix, status, count, retryAfter, afterProcessing, holdMs, withCursor } = body;
	if (withCursor !== undefined && typeof withCursor !== 'boolean') throw new BadRequest('withCursor must be a boolean.');
	if (kind !== 'status' && kind !== 'drop' && kind !== 'hold') throw new BadRequest('kind must be "status", "drop" or "hold".');
	if (kind === 'hold') {
		if (typeof holdMs !== 'number' || !Number.isInteger(holdMs) || holdMs < 1 || holdMs > 600_000) throw new BadRequest('holdMs must be a number of milliseconds (1 to 600000).');
	}
	if (typeof pathPrefix !== 'string' || pathPrefix === '') throw new BadRequest('pathPrefix is required, e.g. "/v1/agency/proposals".');
	if (kind === 'status' && (typeof status !== 'number' || !Number.isInteger(status) || status < 100 || status > 599)) throw new BadRequest('status must be an HTTP status code.');
	if (count !== undefined && (typeof count !== 'number' || !Number.isInteger(count) || count < 1)) throw new BadRequest('count must be a positive integer.');
	if (method !== undefined && typeof method !== 'string') throw new BadRequest('method must be a string.');
	if (retryAfter !== undefined && typeof retryAfter !== 'number') throw new BadRequest('retryAfter must be a number of seconds.');
	if (kind === 'hold') return { kind, method, pathPrefix, status: 0, count: (count as number | undefined) ?? 1, afterProcessing: true, holdMs: holdMs as number };
	return {
		kind,
		method,
		pathPrefix,
		status: kind === 'drop' ? 0 : (status as number),
		count: (count as number | undefined) ?? 1,
		retryAfter,
		afterProcessing: afterProcessing === true,
		...(withCursor === true ? { withCursor: true } : {}),
	};
}

export function handleControl(ctx: ControlContext, method: string, route: string, body: Record<string, unknown>, instance: string): ApiResponse {
	const { core, simulator } = ctx;
	const { state, webhooks, limiter } = core;
	try {
		switch (`${method} ${route}`) {
			case 'POST /webhook-endpoints': {
				if (typeof body.url !== 'string') throw new BadRequest('url is required.');
				if (body.secret !== undefined && typeof body.secret !== 'string') throw new BadRequest('secret must be a string.');
				try {
					return json(webhooks.register(body.url, body.secret as string | undefined));
				} catch (error) {
					throw new BadRequest(`Cannot register endpoint: ${(error as Error).message}`);
				}
			}
			case 'GET /webhook-endpoints':
				return json({ data: webhooks.endpoints });
			case 'POST /events': {
				if (typeof body.type !== 'string' || body.type === '') throw new BadRequest('type is required.');
				const data = body.data === undefined ? defaultEventData(core, body.type) : body.data;
				try {
					return json({ messageId: webhooks.fire(body.type, data, body.endpointId as string | undefined) });
				} catch (error) {
					throw new BadRequest((error as Error).message);
				}
			}
			case 'GET /deliveries':
				return json({ data: webhooks.deliveries });
			case 'GET /webhook-settings':
				return json({ answerTimeoutMs: webhooks.answerTimeoutMs, holdRetries: webhooks.holdingRetries });
			case 'POST /webhook-settings': {
				const { answerTimeoutMs, holdRetries } = body;
				if (answerTimeoutMs !== undefined && (typeof answerTimeoutMs !== 'number' || !Number.isInteger(answerTimeoutMs) || answerTimeoutMs < 1 || answerTimeoutMs > 600_000)) {
					throw new BadRequest('answerTimeoutMs must be a number of milliseconds (1 to 600000): how long an attempt waits for its answer.');
				}
				if (holdRetries !== undefined && typeof holdRetries !== 'boolean') throw new BadRequest('holdRetries must be true or false.');
				if (answerTimeoutMs !== undefined) webhooks.answerTimeoutMs = answerTimeoutMs;
				if (holdRetries !== undefined) webhooks.holdRetries(holdRetries);
				return json({ answerTimeoutMs: webhooks.answerTimeoutMs, holdRetries: webhooks.holdingRetries });
			}
			case 'POST /changes':
				return json({ data: applyChange(core, body) });
			case 'GET /requests':
				return json({ data: core.requests });
			case 'DELETE /requests':
				core.requests.length = 0;
				return json({ data: [] });
			case 'GET /messages':
				// userId as Send Message answered it; freelancerUid as it was sent.
				return json({ data: state.messages.map(idView(state, core.variants).story) });
			case 'GET /bid-intents':
				return json({ data: state.bidIntents });
			case 'POST /faults': {
				const fault = toFault(body);
				core.faults.push(fault);
				return json({ data: fault });
			}
			case 'GET /faults':
				return json({ data: core.faults });
			case 'DELETE /faults':
				core.faults.length = 0;
				return json({ data: [] });
			case 'POST /faults/release':
				return json({ released: core.releaseHeld() });
			case 'GET /rate':
				return json({ requestsPerMinute: limiter.requestsPerMinute, maxInAnyWindow: limiter.maxInAnyWindow, rejected429: limiter.rejected429 });
			case 'POST /rate': {
				if (typeof body.requestsPerMinute !== 'number' || body.requestsPerMinute < 0) throw new BadRequest('requestsPerMinute must be a number (0 = unlimited).');
				limiter.requestsPerMinute = body.requestsPerMinute;
				if (body.resetCounters === true) limiter.reset();
				return json({ requestsPerMinute: limiter.requestsPerMinute, maxInAnyWindow: limiter.maxInAnyWindow, rejected429: limiter.rejected429 });
			}
			case 'POST /crm': {
				const record = { ...body, crmId: `crm-${String(state.crm.length + 1).padStart(4, '0')}` };
				state.crm.push(record);
				return json({ data: record });
			}
			case 'GET /crm':
				return json({ data: state.crm });
			case 'DELETE /crm':
				state.crm.length = 0;
				return json({ data: [] });
			case 'POST /simulator': {
				const intervalMs = body.intervalMs === undefined ? undefined : Number(body.intervalMs);
				try {
					simulator.start(intervalMs);
				} catch (error) {
					throw new BadRequest((error as Error).message);
				}
				return json(simulator.status());
			}
			case 'DELETE /simulator':
				simulator.stop();
				return json(simulator.status());
			case 'GET /simulator':
				return json(simulator.status());
			case 'GET /variants':
				return json({ data: core.variants });
			case 'POST /variants':
				Object.assign(core.variants, checkVariants(body));
				return json({ data: core.variants });
			case 'GET /clock':
				return json({ data: { offsetMs: core.clock.offsetMs } });
			case 'POST /clock':
				if (typeof body.offsetMs !== 'number' || !Number.isFinite(body.offsetMs)) throw new BadRequest('offsetMs must be a number of milliseconds (the service\'s clock ahead of this machine\'s; negative: behind).');
				core.clock.offsetMs = body.offsetMs;
				return json({ data: { offsetMs: core.clock.offsetMs } });
			case 'POST /reset':
				core.reset();
				simulator.rewind();
				return json({ ok: true });
			default:
				return problem(404, `No control endpoint ${method} /_sandbox${route}.`, instance);
		}
	} catch (error) {
		if (error instanceof BadRequest) return problem(400, error.message, instance);
		throw error;
	}
}
