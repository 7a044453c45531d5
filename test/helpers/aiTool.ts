/**
 * The tool variant of a node as n8n builds it from `usableAsTool` (convertNodeToAiTool in n8n's
 * cli, packages/cli/src/tool-generation): the description's name gets the suffix "Tool", so
 * `'@tool'` displayOptions hold and the node type is `<package>.<node>Tool`. n8n adds its own
 * descriptionType/toolDescription only when the node has no `toolDescription`; ours has one.
 * Inputs and outputs stay `main` here so the engine helper can read the items the model would get.
 */
import type { INodeParameters, INodeType, INodeTypeDescription } from 'n8n-workflow';
import { NodeHelpers, traverseNodeParameters } from 'n8n-workflow';

export function asAiTool<T extends INodeType>(nodeType: T): T {
	const description: INodeTypeDescription = { ...nodeType.description, name: `${nodeType.description.name}Tool`, displayName: `${nodeType.description.displayName} Tool` };
	delete description.usableAsTool;
	return Object.assign(Object.create(Object.getPrototypeOf(nodeType) as object) as T, nodeType, { description });
}

/** The parameters n8n resolves for a saved node (defaults filled in, hidden ones left out), as `new Workflow()` does. */
export function resolvedParameters(nodeType: INodeType, parameters: INodeParameters): INodeParameters {
	const node = { id: '1', name: 'Tool', type: `n8n-nodes-agency-inbox.${nodeType.description.name}`, typeVersion: 1, position: [0, 0] as [number, number], parameters };
	return NodeHelpers.getNodeParameters(nodeType.description.properties, parameters, true, false, node, nodeType.description) ?? {};
}

export interface FromAiArgument {
	key: string;
	description?: string;
	type?: string;
	defaultValue?: unknown;
}

/** The `$fromAI` arguments in a node's parameters: what n8n puts into the tool's schema (getSchema in n8n-core). */
export function toolArguments(parameters: INodeParameters): FromAiArgument[] {
	const collected: FromAiArgument[] = [];
	traverseNodeParameters(parameters, collected as never);
	return collected;
}
