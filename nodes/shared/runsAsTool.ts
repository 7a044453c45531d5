import type { INode } from 'n8n-workflow';

/**
 * Whether a node runs as n8n's tool variant (for the AI Agent or the MCP Server Trigger): n8n derives
 * it from `usableAsTool` under the type name `<package>.<node>Tool`, in every execution path.
 */
export function runsAsTool(node: Pick<INode, 'type'> | undefined): boolean {
	return typeof node?.type === 'string' && node.type.endsWith('Tool');
}
