/**
 * Every operation of the Agency Inbox node, as its description lists them (each resource's
 * operations, in the node and in its AI tool variant), goes through the request pipeline: run
 * through n8n-core's engine against the sandbox, it keeps to the request budget, a read is sent
 * again after a 5xx and a write is not, and a problem object becomes a NodeApiError with the
 * service's title and detail. n8n's RoutingNode sends an operation's request itself, past all of
 * that, unless the operation's routing is `throughPipeline`; these tests then fail.
 */
import type { IDataObject, INodeParameters, INodePropertyOptions, INodeType } from 'n8n-workflow';
import { NodeHelpers } from 'n8n-workflow';

import { AgencyInbox } from '../../../nodes/AgencyInbox/AgencyInbox.node';
import { pipelineTiming } from '../../../nodes/shared/transport';
import { asAiTool, resolvedParameters, toolArguments } from '../../helpers/aiTool';
import {
	byId,
	credentialFor,
	injectFault,
	rateFigures,
	type RecordedRequest,
	runAgencyInbox,
	type RunOptions,
	type Sandbox,
	takeRequests,
	useSandbox,
} from './fixtures';

interface OperationUnderTest {
	variant: 'node' | 'AI tool';
	resource: string;
	operation: string;
	/** The HTTP method the operation declares (n8n's default is GET). */
	method: string;
}

/** Every resource × operation the node type's description shows. */
function operationsOf(nodeType: INodeType, variant: OperationUnderTest['variant']): OperationUnderTest[] {
	const { description } = nodeType;
	const node = { typeVersion: 1 };
	const resources = description.properties.find((property) => property.name === 'resource')?.options as INodePropertyOptions[];
	return resources.flatMap(({ value: resource }) =>
		description.properties
			.filter((property) => property.name === 'operation' && NodeHelpers.displayParameter({ resource }, property, node, description))
			.flatMap((property) => property.options as INodePropertyOptions[])
			.map((option) => ({
				variant,
				resource: String(resource),
				operation: String(option.value),
				method: String(option.routing?.request?.method ?? 'GET').toUpperCase(),
			})),
	);
}

const node = new AgencyInbox();
const tool = asAiTool(new AgencyInbox());
const OPERATIONS = [...operationsOf(node, 'node'), ...operationsOf(tool, 'AI tool')];

/** A value for every required parameter and tool argument of an operation, by name: seeded sandbox records. */
const SAMPLE_ARGUMENTS: Record<string, string> = {
	proposalId: 'prop-0001',
	roomId: 'room-001',
	freelancerUid: 'mem-001',
	message: 'Hello from the pipeline test',
	bidIntentId: 'bid-001',
};

function sampleFor(name: string, operation: OperationUnderTest): string {
	if (!(name in SAMPLE_ARGUMENTS)) {
		throw new Error(`${operation.resource} → ${operation.operation} needs "${name}": add a sample value to SAMPLE_ARGUMENTS`);
	}
	return SAMPLE_ARGUMENTS[name];
}

/**
 * The node's parameters and one input item: the node gets each required parameter's sample, the
 * tool keeps its `$fromAI` defaults and gets the samples as the model's arguments (the input item).
 */
function invocationOf(operation: OperationUnderTest): { parameters: INodeParameters; inputItem: IDataObject } {
	const selected: INodeParameters = { resource: operation.resource, operation: operation.operation };
	if (operation.variant === 'AI tool') {
		const needed = toolArguments(resolvedParameters(tool, selected)).filter((argument) => argument.defaultValue === undefined);
		return { parameters: selected, inputItem: Object.fromEntries(needed.map(({ key }) => [key, sampleFor(key, operation)])) };
	}
	const required = node.description.properties.filter(
		(property) => property.required && NodeHelpers.displayParameter(selected, property, { typeVersion: 1 }, node.description),
	);
	const parameters = { ...selected };
	for (const property of required) {
		const value = sampleFor(property.name, operation);
		parameters[property.name] = property.type === 'resourceLocator' ? byId(value) : value;
	}
	return { parameters, inputItem: {} };
}

async function run(sandbox: Sandbox, operation: OperationUnderTest, options: RunOptions & { items?: number } = {}) {
	const { parameters, inputItem } = invocationOf(operation);
	const inputItems = Array.from({ length: options.items ?? 1 }, () => inputItem);
	return await runAgencyInbox(sandbox, parameters, { ...options, inputItems, asTool: operation.variant === 'AI tool' });
}

/** The answer the service gives to the same request now: the problem object of an injected fault. */
async function answerTo(sandbox: Sandbox, request: RecordedRequest): Promise<{ title: string; detail: string }> {
	const query = new URLSearchParams(request.query).toString();
	const response = await fetch(`${sandbox.url}${request.path}${query ? `?${query}` : ''}`, {
		method: request.method,
		headers: { authorization: `Bearer ${sandbox.apiKey}` },
	});
	return (await response.json()) as { title: string; detail: string };
}

const label = '$variant: $resource → $operation ($method)';

it('reads the operations from the description, of the node and of its AI tool variant', () => {
	for (const variant of ['node', 'AI tool'] as const) {
		const names = OPERATIONS.filter((operation) => operation.variant === variant).map(({ resource, operation }) => `${resource}.${operation}`);
		expect(names).toEqual(expect.arrayContaining(['agency.get', 'proposal.getAll', 'message.send', 'bidIntent.cancel']));
	}
});

describe('the request budget', () => {
	// Two requests per window, the window shortened to 0.5 s on both sides; lists fit one page.
	const windowMs = 500;
	const sandbox = useSandbox({ requestsPerMinute: 2, rateLimitWindowMs: windowMs, pageSize: 100 });
	const savedWindowMs = pipelineTiming.windowMs;
	beforeAll(() => (pipelineTiming.windowMs = windowMs));
	afterAll(() => (pipelineTiming.windowMs = savedWindowMs));

	it.each(OPERATIONS)(`${label}: three input items at Requests per Minute 2: the third waits, no 429 from the service`, async (operation) => {
		// Continue On Fail: a write repeated on the same record may be refused; it is still sent.
		await run(sandbox(), operation, { items: 3, continueOnFail: true, credential: credentialFor(sandbox(), { requestsPerMinute: 2 }) });
		const requests = await takeRequests(sandbox());
		expect(requests.filter((request) => request.method === operation.method).length).toBeGreaterThanOrEqual(3);
		expect(await rateFigures(sandbox())).toMatchObject({ rejected429: 0, maxInAnyWindow: 2 });
	});
});

describe('retries', () => {
	const sandbox = useSandbox();
	const savedBackoff = pipelineTiming.retryBackoffMs;
	beforeAll(() => (pipelineTiming.retryBackoffMs = [20, 40, 80]));
	afterAll(() => (pipelineTiming.retryBackoffMs = savedBackoff));

	const reads = OPERATIONS.filter((operation) => operation.method === 'GET');
	const writes = OPERATIONS.filter((operation) => operation.method !== 'GET');

	it.each(reads)(`${label}: a read answered 503 is sent again and succeeds`, async (operation) => {
		await injectFault(sandbox(), { method: operation.method, pathPrefix: '/v1', status: 503, count: 1 });
		const { error } = await run(sandbox(), operation);
		expect(error).toBeUndefined();
		const [failed, retried] = await takeRequests(sandbox());
		expect(failed).toMatchObject({ method: operation.method, status: 503 });
		expect(retried).toMatchObject({ method: operation.method, path: failed.path, status: 200 });
	});

	it.each(writes)(`${label}: a write answered 503 is not sent again`, async (operation) => {
		await injectFault(sandbox(), { method: operation.method, pathPrefix: '/v1', status: 503, count: 1 });
		const { error } = await run(sandbox(), operation);
		expect(error?.httpCode).toBe('503');
		expect((await takeRequests(sandbox())).map(({ method, status }) => ({ method, status }))).toEqual([{ method: operation.method, status: 503 }]);
	});
});

describe('error mapping', () => {
	const sandbox = useSandbox();

	it.each(OPERATIONS)(`${label}: a 400 problem object becomes a NodeApiError with the service's title and detail`, async (operation) => {
		// Two faults: the node's request takes the first, the same request sent here the second.
		await injectFault(sandbox(), { method: operation.method, pathPrefix: '/v1', status: 400, count: 2 });
		const { error } = await run(sandbox(), operation);
		const [request, ...more] = await takeRequests(sandbox());
		expect(more).toEqual([]);
		const problem = await answerTo(sandbox(), request);
		// The run keeps a copy of the error, with its class's name.
		expect(error?.name).toBe('NodeApiError');
		expect(error?.httpCode).toBe('400');
		expect(error?.message).toContain(`${problem.title}: ${problem.detail.replace(/[.\s]+$/, '')}`);
	});
});
