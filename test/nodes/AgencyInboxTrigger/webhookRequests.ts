/** Request and response objects shaped like the ones n8n's webhook server hands to a node. */
import { EventEmitter } from 'node:events';

import type { IDataObject, IRun, IWebhookResponseData } from 'n8n-workflow';

import { AgencyInboxTrigger } from '../../../nodes/AgencyInboxTrigger/AgencyInboxTrigger.node';
import { leaseTiming } from '../../../nodes/AgencyInboxTrigger/onceOnly/deliveryLease';
import { storeTiming } from '../../../nodes/AgencyInboxTrigger/onceOnly/storeLine';
import { type CredentialData, TriggerWorkflow } from '../../helpers/engine';

export interface RequestInput {
	body: Buffer;
	headers?: Record<string, string>;
	/** The client address as Express resolves it (req.ip). */
	ip?: string;
}

/**
 * As n8n's raw body reader and body parser leave it: the raw bytes in `rawBody`, the parsed JSON
 * in `body`, lowercase header names, and Express's `ip`/`ips`.
 */
export function n8nRequest({ body, headers = {}, ip = '127.0.0.1' }: RequestInput) {
	let parsed: unknown = {};
	try {
		parsed = body.length ? JSON.parse(body.toString('utf8')) : {};
	} catch {
		parsed = {};
	}
	return {
		method: 'POST',
		url: '/webhook/agency-inbox',
		headers: { 'content-type': 'application/json', 'content-length': String(body.length), ...headers },
		contentType: 'application/json',
		rawBody: body,
		body: parsed,
		readRawBody: async () => {},
		ip,
		ips: [],
		params: {},
		query: {},
		socket: { remoteAddress: ip },
	};
}

/**
 * A response as n8n's webhook server hands it to the node: what the node writes when it answers
 * itself, and n8n's own answer (`answerAfterRun`), with the events an Express response emits.
 */
export class RecordedResponse extends EventEmitter {
	statusCode = 200;

	headers: Record<string, string> = {};

	body = '';

	writableEnded = false;

	writableFinished = false;

	/** The sender stopped waiting (its answer timeout): it never sees the answer. */
	private hungUp = false;

	writeHead(status: number, headers: Record<string, string> = {}) {
		this.statusCode = status;
		this.headers = headers;
		return this;
	}

	end(body = '') {
		this.body = body;
		this.writableEnded = true;
		// Node emits 'prefinish' at the end whether the sender still listens or not; 'finish' only when it does.
		this.emit('prefinish');
		if (!this.hungUp) {
			this.writableFinished = true;
			this.emit('finish');
			this.emit('close');
		}
		return this;
	}

	/** The sender hangs up before n8n answers: 'close' without 'finish'; n8n still ends the response later. */
	hangUp() {
		this.hungUp = true;
		this.emit('close');
	}
}

/** n8n's answer once a delivery's run ended (responseMode lastNode, responseData noData): 500 when the run failed, else 200. */
export function answerAfterRun(response: RecordedResponse, run: IRun): number {
	response.writeHead(run.data.resultData.error ? 500 : 200);
	response.end();
	return response.statusCode;
}

export interface Answer {
	/** The status the sender sees: the node's own, n8n's 200 for a no-run answer, or n8n's answer after the run. */
	status: number;
	/** Items of the run the delivery started; undefined when no run starts. */
	items?: IDataObject[];
	message?: string;
	result: IWebhookResponseData;
}

/** What the trigger's webhook() hands to n8n for one request, before any run. */
export async function receive(trigger: TriggerWorkflow, input: RequestInput, response = new RecordedResponse(), mode: 'webhook' | 'manual' = 'webhook'): Promise<IWebhookResponseData> {
	return await trigger.webhook(n8nRequest(input), response, 'default', mode);
}

/** One delivery as n8n handles it: webhook(), then the run it starts (the trigger node first), then n8n's answer. */
export async function deliver(
	trigger: TriggerWorkflow,
	input: RequestInput,
	mode: 'webhook' | 'manual' = 'webhook',
): Promise<Answer> {
	const response = new RecordedResponse();
	const result = await receive(trigger, input, response, mode);
	if (result.noWebhookResponse) {
		return { status: response.statusCode, items: undefined, message: JSON.parse(response.body).message, result };
	}
	const started = result.workflowData?.[0];
	if (!started) return { status: 200, items: undefined, message: (result.webhookResponse as IDataObject | undefined)?.message as string | undefined, result };
	// n8n then runs the workflow, starting with the trigger node itself: its output is what the workflow sees.
	const run = await trigger.runStartedBy(started, mode);
	return { status: answerAfterRun(response, run), items: triggerOutput(run), result };
}

/** The items the trigger node passed on in a run. */
export function triggerOutput(run: IRun): IDataObject[] {
	return (run.data.resultData.runData['Node Under Test'][0].data?.main[0] ?? []).map((item) => item.json);
}

/** The static data n8n's database holds after the deliveries so far. */
export function persistedStaticData(trigger: TriggerWorkflow): IDataObject {
	return structuredClone(trigger.savedStaticData);
}

export function triggerWith(parameters: IDataObject, credentials: CredentialData, staticData?: IDataObject, workflowId?: string) {
	return new TriggerWorkflow(
		{
			type: 'agencyInboxTrigger',
			nodeType: new AgencyInboxTrigger(),
			parameters: { events: ['*'], options: {}, ...parameters } as never,
			credentials: { agencyInboxApi: { apiKey: 'sandbox-key-1', baseUrl: 'http://127.0.0.1:9/service', ...credentials } },
		},
		staticData,
		workflowId,
	);
}

/**
 * The trigger as another n8n process runs it: a fresh copy of the node's modules, so its own memory
 * and its own process token (a webhook process, a worker, or n8n after a restart).
 */
export function inAnotherProcess(trigger: TriggerWorkflow): TriggerWorkflow {
	jest.isolateModules(() => {
		const { AgencyInboxTrigger: InAnotherProcess } = jest.requireActual<typeof import('../../../nodes/AgencyInboxTrigger/AgencyInboxTrigger.node')>('../../../nodes/AgencyInboxTrigger/AgencyInboxTrigger.node');
		const { storeTiming: itsTiming } = jest.requireActual<typeof import('../../../nodes/AgencyInboxTrigger/onceOnly/storeLine')>('../../../nodes/AgencyInboxTrigger/onceOnly/storeLine');
		const { leaseTiming: itsLeaseTiming } = jest.requireActual<typeof import('../../../nodes/AgencyInboxTrigger/onceOnly/deliveryLease')>('../../../nodes/AgencyInboxTrigger/onceOnly/deliveryLease');
		const { resetProcessMemory } = jest.requireActual<typeof import('../../../nodes/shared/processMemory')>('../../../nodes/shared/processMemory');
		Object.assign(itsTiming, storeTiming);
		Object.assign(itsLeaseTiming, leaseTiming);
		processEnds.set(trigger, resetProcessMemory);
		trigger.useNodeType(new InAnotherProcess());
	});
	return trigger;
}

/** How each process of inAnotherProcess ends: its memory gone, so it renews no lease (a SIGKILL). */
const processEnds = new WeakMap<TriggerWorkflow, () => void>();

/** The process that runs this trigger dies (SIGKILL): nothing it keeps survives, and it writes nothing more. */
export function killProcess(trigger: TriggerWorkflow): void {
	processEnds.get(trigger)!();
}
