/**
 * Runs our nodes through n8n-core's real execution engine: WorkflowExecute (with the declarative
 * RoutingNode), PollContext, WebhookContext and LoadOptionsContext, with credentials resolved the
 * way n8n's CredentialsHelper resolves them (defaults applied, generic `authenticate` expressions
 * evaluated against `$credentials`). Only the database and the UI are left out.
 */
import {
	DirectoryLoader,
	ExecuteContext,
	ExecutionLifecycleHooks,
	LoadOptionsContext,
	PollContext,
	RoutingNode,
	WebhookContext,
	WorkflowExecute,
} from 'n8n-core';
import type {
	ICredentialDataDecryptedObject,
	ICredentialsDecrypted,
	ICredentialType,
	IConnections,
	IDataObject,
	IExecuteData,
	IHttpRequestOptions,
	INode,
	INodeCredentialTestResult,
	INodeExecutionData,
	INodeParameters,
	INodeType,
	INodeTypeData,
	INodeTypes,
	IRun,
	IVersionedNodeType,
	IWebhookData,
	IWebhookResponseData,
	IWorkflowExecuteAdditionalData,
	IWorkflowSettings,
	WorkflowActivateMode,
	WorkflowExecuteMode,
} from 'n8n-workflow';
import { createRunExecutionData, ICredentialsHelper, NodeHelpers, Workflow } from 'n8n-workflow';

import { AgencyInboxApi } from '../../credentials/AgencyInboxApi.credentials';
import { makeTempDir } from '../../scripts/tempDirs';
import { deduplicationStore } from './deduplicationStore';
import { endWithTest } from './testScope';

export const CREDENTIAL_TYPE = 'agencyInboxApi';
const PACKAGE = 'n8n-nodes-agency-inbox';

/** Credential data as the user fills it in: unset fields take the credential type's defaults. */
export type CredentialData = ICredentialDataDecryptedObject;

// n8n-core keeps its instance settings in a user folder it creates on first use, ~/.n8n unless
// N8N_USER_FOLDER says otherwise (a real user's n8n). jest's globalSetup sets one; the benchmarks get a throwaway one.
process.env.N8N_USER_FOLDER ||= makeTempDir('n8n');

// n8n's deduplication store, which n8n initialises at start-up.
deduplicationStore();

const credentialTypes: Record<string, ICredentialType> = { [CREDENTIAL_TYPE]: new AgencyInboxApi() };

function withDefaults(type: string, data: CredentialData): CredentialData {
	const properties = credentialTypes[type].properties;
	return NodeHelpers.getNodeParameters(properties, data as INodeParameters, true, false, null, null) as CredentialData;
}

/** How many times a node had a credential decrypted (n8n 2.x takes a fresh expression isolate for each). */
export const credentialDecryptions = { count: 0 };

/** The CLI's CredentialsHelper without its database: same defaults, same generic authentication. */
class TestCredentialsHelper extends ICredentialsHelper {
	constructor(private readonly credentials: Record<string, CredentialData>) {
		super();
	}

	getParentTypes(): string[] {
		return [];
	}

	async authenticate(
		credentials: ICredentialDataDecryptedObject,
		typeName: string,
		requestOptions: IHttpRequestOptions,
		workflow: Workflow,
		node: INode,
	): Promise<IHttpRequestOptions> {
		const { authenticate } = credentialTypes[typeName];
		if (typeof authenticate === 'function') return await authenticate(credentials, requestOptions);
		if (authenticate?.type !== 'generic') return requestOptions;
		for (const [target, entries] of Object.entries(authenticate.properties)) {
			const resolved: IDataObject = { ...((requestOptions as unknown as IDataObject)[target] as IDataObject) };
			for (const [key, value] of Object.entries(entries as IDataObject)) {
				resolved[key] = String(
					workflow.expression.getSimpleParameterValue(node, value as string, 'internal', {
						$credentials: credentials,
					}) ?? '',
				);
			}
			(requestOptions as unknown as IDataObject)[target] = resolved;
		}
		return requestOptions;
	}

	async preAuthentication() {
		return undefined;
	}

	async runPreAuthentication() {
		return undefined;
	}

	async getCredentials(): Promise<never> {
		throw new Error('The test credentials helper has no credential store');
	}

	async getDecrypted(_additionalData: unknown, _nodeCredentials: unknown, type: string) {
		if (!this.credentials[type]) throw new Error(`No test credentials of type ${type}`);
		credentialDecryptions.count++;
		return withDefaults(type, this.credentials[type]);
	}

	async updateCredentials() {}

	async updateCredentialsOauthTokenData() {}

	getCredentialsProperties(type: string) {
		return credentialTypes[type].properties;
	}

	isCredentialUsableByNode() {
		return true;
	}
}

/** The node type as n8n's loader hands it out: a polling node gets n8n's Poll Times parameter (`pollTimes`). */
function asLoaded(type: INodeType | IVersionedNodeType): INodeType | IVersionedNodeType {
	if (!('polling' in type.description) || !type.description.polling) return type;
	const loaded = Object.create(type) as INodeType;
	loaded.description = { ...type.description, properties: [...type.description.properties] };
	(DirectoryLoader.prototype as unknown as { applySpecialNodeParameters(nodeType: INodeType): void }).applySpecialNodeParameters(loaded);
	return loaded;
}

/** Node types by their short name (as in package.json), registered under the package's prefix. */
export function createNodeTypes(types: Record<string, INodeType | IVersionedNodeType>): INodeTypes {
	const data: INodeTypeData = {};
	for (const [name, type] of Object.entries(types)) data[`${PACKAGE}.${name}`] = { type: asLoaded(type), sourcePath: '' };
	return {
		getByName: (name) => data[name]?.type,
		getByNameAndVersion: (name, version) => NodeHelpers.getVersionedNodeType(data[name].type, version),
		getKnownTypes: () => ({}),
	};
}

/** A start node that emits the test's input items, like a Manual Trigger followed by a Code node. */
class InputItems implements INodeType {
	description = {
		displayName: 'Input Items',
		name: 'inputItems',
		group: ['input'],
		version: 1,
		description: 'Emits the items given in its parameter',
		defaults: { name: 'Input Items' },
		inputs: [],
		outputs: ['main'],
		properties: [{ displayName: 'Items', name: 'items', type: 'json', default: '[]' }],
	} as unknown as INodeType['description'];

	async execute(this: import('n8n-workflow').IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const items = JSON.parse(this.getNodeParameter('items', 0) as string) as IDataObject[];
		return [items.map((json) => ({ json }))];
	}
}

function createAdditionalData(
	credentials: Record<string, CredentialData>,
	hooks: ExecutionLifecycleHooks,
): IWorkflowExecuteAdditionalData {
	return {
		credentialsHelper: new TestCredentialsHelper(credentials),
		hooks,
		executionId: hooks.executionId,
		restApiUrl: 'http://127.0.0.1:5678/rest',
		instanceBaseUrl: 'http://127.0.0.1:5678/',
		webhookBaseUrl: 'http://127.0.0.1:5678/webhook',
		webhookWaitingBaseUrl: 'http://127.0.0.1:5678/webhook-waiting',
		webhookTestBaseUrl: 'http://127.0.0.1:5678/webhook-test',
		formWaitingBaseUrl: 'http://127.0.0.1:5678/form-waiting',
		currentNodeParameters: undefined,
		executionTimeoutTimestamp: undefined,
		variables: {},
		userId: 'test-user',
		setExecutionStatus: () => {},
		sendDataToUI: () => {},
		logAiEvent: () => {},
		executeWorkflow: async () => {
			throw new Error('Sub-workflows are not used by these tests');
		},
		getRunExecutionData: async () => undefined,
		startRunnerTask: async () => {
			throw new Error('Task runners are not used by these tests');
		},
	} as unknown as IWorkflowExecuteAdditionalData;
}


let executions = 0;

function createHooks(mode: WorkflowExecuteMode, executionId = `test-${++executions}`) {
	// An execution id per run, as n8n gives each run its own (a run of the same execution again keeps it).
	return new ExecutionLifecycleHooks(mode, executionId, {
		id: 'test-workflow',
		name: 'Test',
		active: false,
		isArchived: false,
		nodes: [],
		connections: {},
		createdAt: new Date(),
		updatedAt: new Date(),
	} as never);
}

export interface NodeUnderTest {
	/** Short type name, e.g. `agencyInbox`. */
	type: string;
	nodeType: INodeType | IVersionedNodeType;
	parameters: INodeParameters;
	credentials?: Record<string, CredentialData>;
	continueOnFail?: boolean;
	/** The workflow's time zone setting. */
	timezone?: string;
}

export interface NodeRunResult {
	/** Output items of the node under test (first output), undefined when the node failed. */
	items: INodeExecutionData[];
	/** The error that stopped the run, if any. */
	error?: Error & { description?: string | null; httpCode?: string | null; context?: IDataObject };
	run: IRun;
}

const NODE_NAME = 'Node Under Test';

function nodeFor(test: NodeUnderTest, position: [number, number] = [200, 0]): INode {
	return {
		id: 'node-under-test',
		name: NODE_NAME,
		type: `${PACKAGE}.${test.type}`,
		typeVersion: 1,
		position,
		parameters: test.parameters,
		credentials: test.credentials
			? Object.fromEntries(Object.keys(test.credentials).map((type) => [type, { id: '1', name: type }]))
			: undefined,
		onError: test.continueOnFail ? 'continueRegularOutput' : undefined,
	};
}

/** Runs `Input Items → node under test` through WorkflowExecute and returns the node's output. */
export async function runNode(test: NodeUnderTest, inputItems: IDataObject[] = [{}]): Promise<NodeRunResult> {
	const nodeTypes = createNodeTypes({ [test.type]: test.nodeType, inputItems: new InputItems() });
	const start: INode = {
		id: 'input-items',
		name: 'Input Items',
		type: `${PACKAGE}.inputItems`,
		typeVersion: 1,
		position: [0, 0],
		parameters: { items: JSON.stringify(inputItems) },
	};
	const workflow = new Workflow({
		id: 'test-workflow',
		nodes: [start, nodeFor(test)],
		connections: { [start.name]: { main: [[{ node: NODE_NAME, type: 'main', index: 0 }]] } },
		active: false,
		nodeTypes,
		settings: test.timezone ? { timezone: test.timezone } : {},
	});
	const hooks = createHooks('manual');
	let finish: (run: IRun) => void = () => {};
	const finished = new Promise<IRun>((resolve) => (finish = resolve));
	hooks.addHandler('workflowExecuteAfter', (run) => finish(run));
	const additionalData = createAdditionalData(test.credentials ?? {}, hooks);
	const runExecutionData = createRunExecutionData({
		executionData: { nodeExecutionStack: [{ node: start, data: { main: [[{ json: {} }]] }, source: null }] },
	});
	await new WorkflowExecute(additionalData, 'manual', runExecutionData).processRunExecutionData(workflow);
	const run = await finished;
	const taskData = run.data.resultData.runData[NODE_NAME]?.[0];
	return {
		items: taskData?.data?.main?.[0] ?? [],
		error: (run.data.resultData.error as NodeRunResult['error']) ?? undefined,
		run,
	};
}

/** Runs a credential test the way n8n's CredentialsTester runs a declarative `test` request. */
export async function testCredential(data: CredentialData): Promise<INodeCredentialTestResult> {
	const credentialType = credentialTypes[CREDENTIAL_TYPE];
	const probe: INodeType = {
		description: {
			displayName: 'Credential Test',
			name: 'credentialTest',
			group: ['transform'],
			version: 1,
			description: '',
			defaults: {},
			inputs: ['main'],
			outputs: ['main'],
			credentials: [{ name: CREDENTIAL_TYPE, required: true }],
			properties: [
				{
					displayName: 'Temp',
					name: 'temp',
					type: 'string',
					default: '',
					routing: { request: credentialType.test!.request },
				},
			],
		} as unknown as INodeType['description'],
	};
	const node = nodeFor({ type: 'credentialTest', nodeType: probe, parameters: {} });
	node.credentials = { [CREDENTIAL_TYPE]: { id: '1', name: 'test' } };
	const workflow = new Workflow({
		nodes: [node],
		connections: {},
		active: false,
		nodeTypes: createNodeTypes({ credentialTest: probe }),
	});
	const decrypted: ICredentialsDecrypted = {
		id: '1',
		name: 'test',
		type: CREDENTIAL_TYPE,
		data: withDefaults(CREDENTIAL_TYPE, data),
	};
	const additionalData = createAdditionalData({ [CREDENTIAL_TYPE]: data }, createHooks('internal'));
	const executeData: IExecuteData = { node, data: {}, source: null };
	const context = new ExecuteContext(
		workflow,
		node,
		additionalData,
		'internal',
		createRunExecutionData(),
		0,
		[],
		{ main: [[{ json: {} }]] },
		executeData,
		[],
	);
	try {
		await new RoutingNode(context, probe, decrypted).runNode();
	} catch (error) {
		const response = (error as { cause?: { response?: { status: number; statusText?: string } } }).cause
			?.response;
		if (response) {
			const rule = credentialType.test!.rules?.find(
				(candidate) => candidate.type === 'responseCode' && candidate.properties.value === response.status,
			);
			if (rule && rule.type === 'responseCode') return { status: 'Error', message: rule.properties.message };
			return { status: 'Error', message: response.statusText || `Received HTTP status code: ${response.status}` };
		}
		const code = (error as { cause?: { code?: string } }).cause?.code;
		return { status: 'Error', message: code ?? (error as Error).message };
	}
	return { status: 'OK', message: 'Connection successful!' };
}

let triggerWorkflows = 0;

/** A workflow holding one trigger node, with static data kept between polls and restarts. */
export class TriggerWorkflow {
	readonly workflow: Workflow;

	readonly node: INode;

	readonly additionalData: IWorkflowExecuteAdditionalData;

	/**
	 * Each instance is its own workflow unless `workflowId` names one: n8n builds a new Workflow with the
	 * static data loaded from its database for each webhook request and each restart.
	 */
	private readonly credentials: Record<string, CredentialData>;

	constructor(test: NodeUnderTest, staticData?: IDataObject, workflowId = `trigger-workflow-${++triggerWorkflows}`) {
		endWithTest(async () => await this.retire());
		this.node = nodeFor(test, [0, 0]);
		this.credentials = test.credentials ?? {};
		this.savedStaticData = staticData ? structuredClone(staticData) : {};
		this.workflow = new Workflow({
			id: workflowId,
			nodes: [this.node],
			connections: {},
			active: true,
			nodeTypes: createNodeTypes({ [test.type]: test.nodeType }),
			staticData: staticData ? structuredClone(staticData) : undefined,
			settings: test.timezone ? { timezone: test.timezone } : {},
		});
		this.additionalData = createAdditionalData(test.credentials ?? {}, createHooks('trigger'));
	}

	private get nodeType(): INodeType {
		return (this.runNodeTypes ?? this.workflow.nodeTypes).getByNameAndVersion(this.node.type, this.node.typeVersion);
	}

	/** Set when the test that made this trigger ended (testScope.ts): a poll, request or run after it fails. */
	private retiredBecause?: string;

	/** The polls, requests and runs under way, awaited when the trigger retires. */
	private readonly underWay = new Set<Promise<unknown>>();

	/** Runs one call of the node, unless the test that made the trigger has ended. */
	private async call<T>(what: string, work: () => Promise<T>): Promise<T> {
		if (this.retiredBecause) throw new Error(`${what} after ${this.retiredBecause}`);
		const running = work();
		this.underWay.add(running);
		try {
			return await running;
		} finally {
			this.underWay.delete(running);
		}
	}

	/** Ends the trigger with its test: later calls fail, and the calls under way finish first. */
	private async retire(): Promise<void> {
		this.retiredBecause = `the test that made workflow ${this.workflow.id} ended`;
		await Promise.allSettled([...this.underWay]);
	}

	/** The node types webhooks and runs use: the workflow's, unless a test loads another copy of the node (another process). */
	private runNodeTypes?: INodeTypes;

	/** Stands for another n8n process: its own copy of the node's modules (its own process memory). */
	useNodeType(nodeType: INodeType): void {
		this.runNodeTypes = createNodeTypes({ [this.node.type.slice(PACKAGE.length + 1)]: nodeType });
	}

	/** The workflow's static data as it is in memory now, read as JSON the way n8n persists it. */
	staticData(): IDataObject {
		// Static data is an observable proxy, which structuredClone cannot copy.
		return JSON.parse(JSON.stringify(this.workflow.staticData)) as IDataObject;
	}

	/**
	 * What n8n's database holds: what the runs' `workflowExecuteAfter` hooks were handed to save (JSON, as
	 * n8n writes it), and what webhook() changed in a request that started no run.
	 */
	savedStaticData: IDataObject;

	/** A Workflow of this node over `staticData`, as n8n builds one per request and per run. */
	private workflowOver(staticData: IDataObject, nodeTypes = this.runNodeTypes ?? this.workflow.nodeTypes): Workflow {
		return new Workflow({ id: this.workflow.id, nodes: [this.node], connections: {}, active: true, nodeTypes, staticData, settings: this.workflow.settings });
	}

	/**
	 * The run a webhook starts, as n8n's WorkflowRunner runs it: a new Workflow over the static data
	 * loaded from the database at the run's start (in queue mode `staticData`: the snapshot n8n took when
	 * it queued the run), the trigger node first with the webhook's items; what the run changed in it is
	 * saved at its end. The Test URL's runs (manual) start from empty static data and save nothing.
	 * `executionId` names an execution that n8n runs again (n8n 1.x, after its worker died).
	 */
	async runStartedBy(items: INodeExecutionData[], mode: WorkflowExecuteMode = 'webhook', options: { staticData?: IDataObject; executionId?: string } = {}): Promise<IRun> {
		return await this.call('a run', async () => await this.run(items, mode, options));
	}

	private async run(items: INodeExecutionData[], mode: WorkflowExecuteMode, options: { staticData?: IDataObject; executionId?: string }): Promise<IRun> {
		const workflow = this.workflowOver(mode === 'manual' ? {} : structuredClone(options.staticData ?? this.savedStaticData));
		const hooks = createHooks(mode, options.executionId);
		let finish: (run: IRun) => void = () => {};
		const finished = new Promise<IRun>((resolve) => (finish = resolve));
		hooks.addHandler('workflowExecuteAfter', (run, newStaticData) => {
			if (newStaticData && mode !== 'manual') this.savedStaticData = JSON.parse(JSON.stringify(newStaticData)) as IDataObject;
			finish(run);
		});
		const runExecutionData = createRunExecutionData({
			executionData: { nodeExecutionStack: [{ node: this.node, data: { main: [items] }, source: null }] },
		});
		const additionalData = createAdditionalData(this.credentials, hooks);
		await new WorkflowExecute(additionalData, mode, runExecutionData).processRunExecutionData(workflow);
		return await finished;
	}

	/** One poll as n8n's poll job runs it ('manual' is the editor's "Fetch Test Event"). */
	async poll(mode: WorkflowExecuteMode = 'trigger', activation: WorkflowActivateMode = 'activate') {
		const context = new PollContext(this.workflow, this.node, this.additionalData, mode, activation);
		return await this.call('a poll', async () => await this.nodeType.poll!.call(context));
	}

	/**
	 * One webhook request as n8n's webhook service hands it to the node: a Workflow over the static data
	 * loaded from the database (the Test URL: the listening session's own, empty); a change webhook()
	 * made is saved when no run starts (a run's Workflow over the same object clears its changed flag).
	 */
	async webhook(
		request: { method?: string },
		response: object,
		webhookName: 'default' | 'setup' = 'default',
		mode: WorkflowExecuteMode = 'webhook',
	): Promise<IWebhookResponseData> {
		const workflow = this.workflowOver(mode === 'manual' ? {} : structuredClone(this.savedStaticData));
		const webhookData = {
			httpMethod: request.method,
			node: this.node.name,
			path: 'agency-inbox',
			webhookDescription: { name: webhookName, httpMethod: 'POST', path: 'agency-inbox' },
			workflowId: this.workflow.id,
			workflowExecuteAdditionalData: this.additionalData,
		} as unknown as IWebhookData;
		Object.assign(this.additionalData, { httpRequest: request, httpResponse: response });
		const context = new WebhookContext(workflow, this.node, this.additionalData, mode, webhookData, [], null);
		const result = await this.call('a webhook request', async () => await this.nodeType.webhook!.call(context));
		if (mode !== 'manual' && !result.workflowData && workflow.staticData.__dataChanged) this.savedStaticData = JSON.parse(JSON.stringify(workflow.staticData)) as IDataObject;
		return result;
	}

	/** A resource locator's search method, as the editor calls it (with the node's current parameters). */
	async listSearch(method: string, filter?: string, paginationToken?: string) {
		this.additionalData.currentNodeParameters = this.node.parameters;
		const context = new LoadOptionsContext(this.workflow, this.node, this.additionalData, '');
		const search = this.nodeType.methods?.listSearch?.[method];
		if (!search) throw new Error(`No list search method ${method}`);
		return await search.call(context, filter, paginationToken);
	}
}

/** A workflow as saved (a sample as a user imports it). */
export interface SavedWorkflow {
	nodes: INode[];
	connections: IConnections;
	settings?: IWorkflowSettings;
}

export interface SavedWorkflowRun {
	/** Node types by their full type name; every node of the run needs one (n8n-nodes-base is not installed here). */
	nodeTypes: Record<string, INodeType | IVersionedNodeType>;
	credentials: Record<string, CredentialData>;
	/** The trigger node and the items it handed to n8n (webhook() or poll()). */
	start: { node: string; items: INodeExecutionData[] };
	mode: WorkflowExecuteMode;
	/** Nodes left out with their connections (sticky notes always are). */
	leaveOut?: string[];
}

/**
 * Runs a saved workflow the way n8n runs it once its trigger fired: the trigger node first with the
 * items it handed over, then every node connected after it, with the saved parameters and expressions.
 */
export async function runSavedWorkflow(saved: SavedWorkflow, run: SavedWorkflowRun): Promise<IRun> {
	const leftOut = new Set([...saved.nodes.filter((node) => node.type === 'n8n-nodes-base.stickyNote').map((node) => node.name), ...(run.leaveOut ?? [])]);
	const nodes = saved.nodes.filter((node) => !leftOut.has(node.name));
	const missing = nodes.filter((node) => run.nodeTypes[node.type] === undefined).map((node) => `${node.name} (${node.type})`);
	if (missing.length > 0) throw new Error(`No node type given for ${missing.join(', ')}`);
	const connections: IConnections = {};
	for (const [source, byType] of Object.entries(saved.connections)) {
		if (leftOut.has(source)) continue;
		connections[source] = Object.fromEntries(
			Object.entries(byType).map(([type, outputs]) => [type, outputs.map((targets) => (targets ?? []).filter((target) => !leftOut.has(target.node)))]),
		);
	}
	const workflow = new Workflow({
		id: 'saved-workflow',
		nodes,
		connections,
		active: true,
		nodeTypes: {
			getByName: (name) => run.nodeTypes[name],
			getByNameAndVersion: (name, version) => NodeHelpers.getVersionedNodeType(run.nodeTypes[name], version),
			getKnownTypes: () => ({}),
		},
		settings: saved.settings ?? {},
	});
	const startNode = workflow.getNode(run.start.node);
	if (!startNode) throw new Error(`No node ${run.start.node} in the workflow`);
	const hooks = createHooks(run.mode);
	let finish: (result: IRun) => void = () => {};
	const finished = new Promise<IRun>((resolve) => (finish = resolve));
	hooks.addHandler('workflowExecuteAfter', (result) => finish(result));
	const runExecutionData = createRunExecutionData({
		executionData: { nodeExecutionStack: [{ node: startNode, data: { main: [run.start.items] }, source: null }] },
	});
	await new WorkflowExecute(createAdditionalData(run.credentials, hooks), run.mode, runExecutionData).processRunExecutionData(workflow);
	return await finished;
}

/** The items a node of a finished run passed on at its first run (output `output`); undefined when it did not run. */
export function nodeOutput(run: IRun, node: string, output = 0): IDataObject[] | undefined {
	const task = run.data.resultData.runData[node]?.[0];
	return task && (task.data?.main?.[output] ?? []).map((item) => item.json);
}
