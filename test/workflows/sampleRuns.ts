/**
 * Running the shipped samples through n8n-core's engine as a user imports them: the saved nodes,
 * parameters, expressions and connections (runSavedWorkflow), our node types, and stand-ins for the
 * n8n-nodes-base nodes they use (not installed here). Webhook samples start from the sandbox's own
 * signed deliveries, received over loopback HTTP and handed to the Agency Inbox Trigger.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { IExecuteFunctions, INode, INodeExecutionData, INodeType, INodeTypeDescription, IRun } from 'n8n-workflow';

import { AgencyInbox } from '../../nodes/AgencyInbox/AgencyInbox.node';
import { AgencyInboxMessageTrigger } from '../../nodes/AgencyInboxMessageTrigger/AgencyInboxMessageTrigger.node';
import { AgencyInboxProposalTrigger } from '../../nodes/AgencyInboxProposalTrigger/AgencyInboxProposalTrigger.node';
import { AgencyInboxTrigger } from '../../nodes/AgencyInboxTrigger/AgencyInboxTrigger.node';
import { leaseTiming } from '../../nodes/AgencyInboxTrigger/onceOnly/deliveryLease';
import { storeTiming } from '../../nodes/AgencyInboxTrigger/onceOnly/storeLine';
import { resetProcessMemory } from '../../nodes/shared/processMemory';
import { startSandbox, type Sandbox, type SandboxVariants } from '../../sandbox';
import { loadSampleWorkflows, NODE_TYPES } from '../../scripts/n8n/agencyInbox';
import { runSavedWorkflow, type CredentialData, type SavedWorkflow, TriggerWorkflow } from '../helpers/engine';
import { sandboxControl } from '../helpers/sandboxControl';
import { takeRequests } from '../nodes/AgencyInbox/fixtures';
import { receive } from '../nodes/AgencyInboxTrigger/webhookRequests';

export interface Sample extends SavedWorkflow {
	id: string;
}

/** A sample as `npm start` and the end-to-end tests load it: its CRM URL pointing at the sandbox at `sandboxOrigin`. */
export async function loadSample(sandboxOrigin: string, id: string): Promise<Sample> {
	const samples = (await loadSampleWorkflows({ sandboxOrigin, withChatModel: true })) as unknown as Sample[];
	const sample = samples.find((candidate) => candidate.id === id);
	if (!sample) throw new Error(`No sample workflow ${id}`);
	return sample;
}

export const nodeOf = (sample: Sample, name: string): INode => {
	const node = sample.nodes.find((candidate) => candidate.name === name);
	if (!node) throw new Error(`No node ${name} in sample ${sample.id}`);
	return node;
};

/** The credential every Agency Inbox node of a sample uses, for this sandbox. */
export function sampleCredential(sandbox: Sandbox): CredentialData {
	return { apiKey: sandbox.apiKey, baseUrl: sandbox.url, requestsPerMinute: 10_000, webhookSigningSecret: sandbox.signingSecret };
}

/**
 * The description of a stand-in: the parameters the saved node has (n8n drops the ones a description
 * does not declare), main inputs and outputs.
 */
export function standInDescription(displayName: string, version: number[], outputs: number, properties: Array<{ name: string; type: string; default: unknown; options?: unknown[] }>): INodeTypeDescription {
	return {
		displayName,
		name: displayName.replace(/\W/g, ''),
		group: ['transform'],
		version,
		description: `Stand-in of n8n's ${displayName} node`,
		defaults: { name: displayName },
		inputs: ['main'],
		outputs: Array<string>(outputs).fill('main'),
		properties: properties.map((property) => ({ displayName: property.name, ...property })),
	} as unknown as INodeTypeDescription;
}

/**
 * n8n's IF node, version 2: its `execute` (items that pass to output 0, the others to output 1), with
 * the condition evaluated by n8n-workflow's own filter (`extractValue` of a filter parameter), so the
 * saved conditions run as n8n runs them.
 */
export class IfNodeV2 implements INodeType {
	description = standInDescription('If', [2, 2.1, 2.2], 2, [
		{ name: 'conditions', type: 'filter', default: {} },
		{ name: 'options', type: 'collection', default: {}, options: [] },
	]);

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const passed: INodeExecutionData[] = [];
		const failed: INodeExecutionData[] = [];
		for (const [itemIndex, item] of this.getInputData().entries()) {
			const pass = this.getNodeParameter('conditions', itemIndex, false, { extractValue: true }) as boolean;
			(pass ? passed : failed).push({ ...item, pairedItem: { item: itemIndex } });
		}
		return [passed, failed];
	}
}

/**
 * n8n's HTTP Request node restated for the one configuration a sample uses: a JSON body given as an
 * expression (`specifyBody: json`), sent with the saved method to the saved URL; the answer's JSON is
 * the output item. Anything else is refused, so a changed sample cannot pass unnoticed.
 */
export class HttpRequestJsonBody implements INodeType {
	description = standInDescription('HTTP Request', [4, 4.1, 4.2], 1, [
		...['method', 'url', 'specifyBody', 'jsonBody'].map((name) => ({ name, type: 'string', default: '' })),
		{ name: 'sendBody', type: 'boolean', default: false },
		{ name: 'options', type: 'collection', default: {}, options: [] },
	]);

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const output: INodeExecutionData[] = [];
		for (const itemIndex of this.getInputData().keys()) {
			const parameter = (name: string) => this.getNodeParameter(name, itemIndex);
			if (parameter('sendBody') !== true || parameter('specifyBody') !== 'json' || Object.keys(parameter('options') as object).length > 0) {
				throw new Error('This stand-in of the HTTP Request node only sends a JSON body without options');
			}
			const body = JSON.parse(parameter('jsonBody') as string) as object;
			const answer = (await this.helpers.httpRequest({ method: parameter('method') as 'POST', url: parameter('url') as string, body, json: true })) as object;
			output.push({ json: answer as never, pairedItem: { item: itemIndex } });
		}
		return [output];
	}
}

/** Our node types under their full names, with the n8n-nodes-base stand-ins. */
export const SAMPLE_NODE_TYPES: Record<string, INodeType> = {
	[NODE_TYPES.action]: new AgencyInbox(),
	[NODE_TYPES.trigger]: new AgencyInboxTrigger(),
	[NODE_TYPES.proposalTrigger]: new AgencyInboxProposalTrigger(),
	[NODE_TYPES.messageTrigger]: new AgencyInboxMessageTrigger(),
	'n8n-nodes-base.if': new IfNodeV2(),
	'n8n-nodes-base.httpRequest': new HttpRequestJsonBody(),
};

interface Delivery {
	body: Buffer;
	headers: Record<string, string>;
}

/** A webhook endpoint registered with the sandbox that answers 200 and keeps what it received. */
export class WebhookInbox {
	private readonly received: Delivery[] = [];
	private taken = 0;
	private server?: Server;

	async open(sandbox: Sandbox): Promise<void> {
		this.server = createServer((request, response) => {
			const chunks: Buffer[] = [];
			request.on('data', (chunk: Buffer) => chunks.push(chunk));
			request.on('end', () => {
				this.received.push({ body: Buffer.concat(chunks), headers: headerRecord(request.headers) });
				response.writeHead(200).end();
			});
		});
		await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
		const url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/webhook/agency-inbox`;
		await sandboxControl(sandbox.origin, 'POST', 'webhook-endpoints', { url });
	}

	/** The next delivery not taken yet (the sandbox sends each event once when the first attempt gets 200). */
	async next(timeoutMs = 10_000): Promise<Delivery> {
		const deadline = Date.now() + timeoutMs;
		while (this.received.length <= this.taken) {
			if (Date.now() > deadline) throw new Error('No webhook delivery arrived');
			await new Promise((resolve) => setTimeout(resolve, 10));
		}
		return this.received[this.taken++];
	}

	/** Forgets deliveries not taken (a reset sandbox sends none of its own; a test starts with none pending). */
	skipPending(): void {
		this.taken = this.received.length;
	}

	async close(): Promise<void> {
		this.server?.closeAllConnections();
		await new Promise((resolve) => (this.server ? this.server.close(resolve) : resolve(undefined)));
	}
}

const headerRecord = (headers: IncomingHttpHeaders) =>
	Object.fromEntries(Object.entries(headers).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));

/**
 * The sample's webhook trigger receives one delivery as n8n's webhook server hands it over; the
 * items it starts a run with, or none when it starts no run (refused, not selected, a repeat).
 */
export async function triggerItems(trigger: TriggerWorkflow, delivery: Delivery): Promise<INodeExecutionData[] | undefined> {
	const result = await receive(trigger, delivery);
	return result.workflowData?.[0];
}

// A webhook run reads n8n's deduplication store back after this long (a second in n8n), as the trigger's own tests shorten it.
storeTiming.settleMs = 20;
Object.assign(leaseTiming, { slotMs: 400, renewMs: 100, probeGapMs: 150, maxHoldMs: 3_000 });

/** The sample's webhook trigger node as a TriggerWorkflow that keeps its static data between deliveries. */
export function sampleWebhookTrigger(sample: Sample, name: string, sandbox: Sandbox): TriggerWorkflow {
	return new TriggerWorkflow(
		{ type: 'agencyInboxTrigger', nodeType: new AgencyInboxTrigger(), parameters: nodeOf(sample, name).parameters, credentials: { agencyInboxApi: sampleCredential(sandbox) } },
		undefined,
		sample.id,
	);
}

/** Runs the sample from its trigger with the items the trigger handed to n8n. */
export async function runSample(sample: Sample, sandbox: Sandbox, start: { node: string; items: INodeExecutionData[] }, options: { mode?: 'webhook' | 'trigger'; nodeTypes?: Record<string, INodeType>; leaveOut?: string[] } = {}): Promise<IRun> {
	return await runSavedWorkflow(sample, {
		nodeTypes: { ...SAMPLE_NODE_TYPES, ...options.nodeTypes },
		credentials: { agencyInboxApi: sampleCredential(sandbox) },
		start,
		mode: options.mode ?? 'webhook',
		leaveOut: options.leaveOut,
	});
}

export interface SampleSetup {
	sandbox: Sandbox;
	sample: Sample;
	/** With `webhooks`: the endpoint the sandbox delivers its events to. */
	inbox: WebhookInbox;
}

/**
 * For a describe block: a sandbox under the given reading with the sample loaded for it, reset before
 * each test (with the request budgets, the parameters refused so far and its request log); with
 * `webhooks`, an endpoint registered for its deliveries. The fields are set once beforeAll has run.
 */
export function useSampleSandbox(sampleId: string, variants: SandboxVariants, options: { webhooks?: boolean } = {}): SampleSetup {
	const setup = { inbox: new WebhookInbox() } as SampleSetup;
	beforeAll(async () => {
		setup.sandbox = await startSandbox({ requestsPerMinute: 0, variants });
		setup.sample = await loadSample(setup.sandbox.origin, sampleId);
		if (options.webhooks) await setup.inbox.open(setup.sandbox);
	});
	afterAll(async () => {
		await setup.inbox.close();
		await setup.sandbox?.close();
	});
	beforeEach(async () => {
		resetProcessMemory();
		await sandboxControl(setup.sandbox.origin, 'POST', 'reset');
		await takeRequests(setup.sandbox);
		setup.inbox.skipPending();
	});
	return setup;
}
