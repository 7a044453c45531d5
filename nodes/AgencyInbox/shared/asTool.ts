/**
 * The node as an AI tool. n8n derives the tool variant `agencyInboxTool` from `usableAsTool`: its
 * type name ends with "Tool", and displayOptions `'@tool': [true]` show a property only there. So
 * the properties below exist only in the tool variant; normal runs keep their parameters, defaults
 * and shapes.
 *
 * - `toolDescription`: n8n adds its own "Set Automatically" description ("<action> in Agency Inbox")
 *   only when a node has no property of that name; ours is prefilled per operation with what the
 *   tool returns, its arguments and its side effects, and the user may edit it.
 * - Arguments: only `$fromAI` values reach the model's schema, so the tool variant's IDs, message and
 *   record count default to `$fromAI` with a description.
 * - Results: list operations return compact records, 10 unless the model asks for more; the user can
 *   turn that off ("Compact Results for the Model").
 */
import type {
	IDataObject,
	IDisplayOptions,
	IExecuteSingleFunctions,
	INodeExecutionData,
	INodeProperties,
	PostReceiveAction,
} from 'n8n-workflow';

import { runsAsTool } from '../../shared/runsAsTool';

export { runsAsTool };

type Show = NonNullable<IDisplayOptions['show']>;

/** Records a list operation returns to a model unless it asks for another number. */
export const TOOL_DEFAULT_RECORDS = 10;

/**
 * A property only in the tool variant (true) or only in the normal node (false). The normal one is
 * hidden in the tool rather than shown outside it: n8n before n8n-workflow 1.86 has no '@tool' value
 * and shows neither variant of a property shown only for `'@tool': [false]`.
 */
function shownAsTool(property: INodeProperties, asTool: boolean): INodeProperties {
	const key = asTool ? 'show' : 'hide';
	const conditions = property.displayOptions?.[key] ?? {};
	return { ...property, displayOptions: { ...property.displayOptions, [key]: { ...conditions, '@tool': [true] } } };
}

export const onlyAsTool = (property: INodeProperties) => shownAsTool(property, true);

/** `={{ $fromAI(...) }}` with the argument's description (quotes escaped for the expression). */
export function fromAi(key: string, description: string, type: 'string' | 'number' = 'string', fallback?: number): string {
	const text = description.replace(/\\/g, '\\\\').replace(/'/g, "\\'");
	const extra = fallback === undefined ? '' : `, ${fallback}`;
	return `={{ $fromAI('${key}', '${text}', '${type}'${extra}) }}`;
}

/**
 * One parameter in two variants: as it is in the normal node, and in the tool variant with a
 * default the model fills in (a resource locator gets the By ID mode).
 */
export function withToolArgument(property: INodeProperties, key: string, description: string): INodeProperties[] {
	const value = fromAi(key, description);
	const toolDefault = property.type === 'resourceLocator' ? { mode: 'id', value } : value;
	return [shownAsTool(property, false), onlyAsTool({ ...property, default: toolDefault })];
}

/** The tool's description, as the model receives it, for one operation. */
export function toolDescription(show: Show, text: string): INodeProperties {
	return onlyAsTool({
		displayName: 'Description',
		name: 'toolDescription',
		type: 'string',
		typeOptions: { rows: 4 },
		default: text,
		required: true,
		description:
			'What the AI model reads about this tool: what it returns, its arguments, its side effects. Prefilled for the operation; after changing the operation, clear it and reopen the node to get the new text.',
		displayOptions: { show },
	});
}

/** postReceive of the tool variant's list operations: compact records while the user keeps it on. */
export function compactItemsWith(compact: (record: IDataObject) => IDataObject): PostReceiveAction {
	return async function compactForModel(this: IExecuteSingleFunctions, items: INodeExecutionData[]) {
		if (!runsAsTool(this.getNode()) || !this.getNodeParameter('compactForModel', true)) return items;
		return items.map((item) => ({ ...item, json: compact(item.json) }));
	};
}

/** Compact Results for the Model and the number of records the model asks for (tool variant only). */
export function toolResultControls(show: Show, compact: (record: IDataObject) => IDataObject, noun: string): INodeProperties[] {
	return [
		onlyAsTool({
			displayName: 'Compact Results for the Model',
			name: 'compactForModel',
			type: 'boolean',
			default: true,
			description: `Whether to give the model compact ${noun} (the fields it needs to act), ${TOOL_DEFAULT_RECORDS} unless it asks for more. Off: Return All, Limit and the full records apply, as in a normal run.`,
			displayOptions: { show },
			routing: { output: { postReceive: [compactItemsWith(compact)] } },
		}),
		onlyAsTool({
			displayName: 'Records for the Model',
			name: 'recordsForModel',
			type: 'number',
			default: fromAi(
				'limit',
				`How many ${noun} to return: ${TOOL_DEFAULT_RECORDS} is enough for most questions, ask for more (up to 100) only when needed`,
				'number',
				TOOL_DEFAULT_RECORDS,
			),
			description: `How many ${noun} the model gets; by default the model chooses (${TOOL_DEFAULT_RECORDS} unless it asks for more)`,
			displayOptions: { show: { ...show, compactForModel: [true] } },
			// Declared after Limit, so this maximum wins over Limit and Return All.
			routing: {
				output: {
					maxResults: '={{ Math.min(Math.max(Math.floor(Number($value) || 10), 1), 100) }}',
				},
			},
		}),
	];
}
