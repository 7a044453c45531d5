/** Shared set-up of the Agency Inbox node tests: a sandbox, a credential for it, control calls. */
import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { AgencyInbox } from '../../../nodes/AgencyInbox/AgencyInbox.node';
import { resetProcessMemory } from '../../../nodes/shared/processMemory';
import type { Sandbox, SandboxOptions } from '../../../sandbox';
import { startSandbox } from '../../../sandbox';
import { asAiTool } from '../../helpers/aiTool';
import { runNode, type CredentialData, type NodeRunResult } from '../../helpers/engine';
import { sandboxControl } from '../../helpers/sandboxControl';

export { startSandbox };
export type { Sandbox, SandboxOptions };

export interface RecordedRequest {
	method: string;
	path: string;
	query: Record<string, string>;
	apiKey: string;
	status: number;
	at: string;
}

export function credentialFor(sandbox: Sandbox, overrides: CredentialData = {}): CredentialData {
	return { apiKey: sandbox.apiKey, baseUrl: sandbox.url, requestsPerMinute: 1000, ...overrides };
}

export async function control<T = IDataObject>(sandbox: Sandbox, method: string, route: string, body?: unknown): Promise<T> {
	return await sandboxControl<T>(sandbox.origin, method, route, body);
}

/** The /v1 requests the sandbox received (and forgets them, so the next look starts empty). */
export async function takeRequests(sandbox: Sandbox): Promise<RecordedRequest[]> {
	const { data } = await control<{ data: RecordedRequest[] }>(sandbox, 'GET', 'requests');
	await control(sandbox, 'DELETE', 'requests');
	return data;
}

export async function injectFault(
	sandbox: Sandbox,
	fault:
		| { kind?: 'status'; method?: string; pathPrefix: string; status: number; count?: number; retryAfter?: number; afterProcessing?: boolean }
		| { kind: 'drop'; method?: string; pathPrefix: string; count?: number; afterProcessing?: boolean },
): Promise<void> {
	await control(sandbox, 'POST', 'faults', fault);
}

/** One sandbox for a test file, reset (with the request budgets and its request log) before each test. */
export function useSandbox(options: SandboxOptions = { requestsPerMinute: 0 }): () => Sandbox {
	let sandbox: Sandbox | undefined;
	beforeAll(async () => {
		sandbox = await startSandbox(options);
	});
	afterAll(async () => await sandbox?.close());
	beforeEach(async () => {
		resetProcessMemory();
		await control(sandbox!, 'POST', 'reset');
		await takeRequests(sandbox!);
	});
	return () => sandbox!;
}

export async function rateFigures(sandbox: Sandbox) {
	return await control<{ requestsPerMinute: number; maxInAnyWindow: number; rejected429: number }>(sandbox, 'GET', 'rate');
}

export interface RunOptions {
	credential?: CredentialData;
	inputItems?: IDataObject[];
	continueOnFail?: boolean;
	timezone?: string;
	/** Run the tool variant (`agencyInboxTool`), as n8n's AI Agent or MCP Server Trigger does; input items carry the model's arguments. */
	asTool?: boolean;
}

/** Runs the Agency Inbox node once, through n8n-core's engine, against the sandbox. */
export async function runAgencyInbox(
	sandbox: Sandbox,
	parameters: INodeParameters,
	options: RunOptions = {},
): Promise<NodeRunResult> {
	return await runNode(
		{
			type: options.asTool ? 'agencyInboxTool' : 'agencyInbox',
			nodeType: options.asTool ? asAiTool(new AgencyInbox()) : new AgencyInbox(),
			parameters,
			credentials: { agencyInboxApi: options.credential ?? credentialFor(sandbox) },
			continueOnFail: options.continueOnFail,
			timezone: options.timezone,
		},
		options.inputItems ?? [{}],
	);
}

export function byId(value: string) {
	return { __rl: true, mode: 'id', value };
}

export function jsonOf(result: NodeRunResult): IDataObject[] {
	return result.items.map((item) => item.json);
}

/** The tool variant, run as n8n runs a tool; `inputItems` carry the model's arguments. */
export async function runAgencyInboxTool(sandbox: Sandbox, parameters: INodeParameters, options: RunOptions = {}): Promise<NodeRunResult> {
	return await runAgencyInbox(sandbox, parameters, { ...options, asTool: true });
}
