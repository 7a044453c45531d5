import type {
	DeclarativeRestApiSettings,
	IExecutePaginationFunctions,
	IExecuteSingleFunctions,
	IHttpRequestOptions,
	INodeExecutionData,
	INodePropertyOptions,
	INodePropertyRouting,
} from 'n8n-workflow';

import { collectRecords } from '../../shared/pagination';
import { simplifyProposal } from '../../shared/simplifyProposal';
import { withPageCursor } from '../../shared/serviceClient';
import { requestEnvelope } from '../../shared/transport';

/** The Limit of a list operation (routing.output.maxResults), or no limit for Return All. */
export function limitOf(requestData: DeclarativeRestApiSettings.ResultOptions): number {
	const limit = Number(requestData.maxResults);
	return Number.isFinite(limit) && limit > 0 ? limit : Infinity;
}

/**
 * The declarative engine's `operations.pagination`, run for every operation (`throughPipeline`):
 * sends through the pipeline, follows cursors for lists, and emits one item per record paired to
 * the input item. postReceive functions declared in the description then run.
 */
export async function executeThroughPipeline(
	this: IExecutePaginationFunctions,
	requestData: DeclarativeRestApiSettings.ResultOptions,
): Promise<INodeExecutionData[]> {
	const itemIndex = this.getItemIndex();
	const firstPage = requestData.options as IHttpRequestOptions;
	const records = await collectRecords(
		async (pageCursor) => await requestEnvelope(this, withPageCursor(firstPage, pageCursor), itemIndex),
		limitOf(requestData),
	);
	let items: INodeExecutionData[] = records.map((json) => ({ json, pairedItem: { item: itemIndex } }));
	// The records may span many pages, so postReceive functions get an empty stand-in response.
	const noSingleResponse = { body: {}, headers: {}, statusCode: 200 };
	for (const { actions } of requestData.postReceive) {
		for (const action of actions) {
			if (typeof action === 'function') items = await action.call(this, items, noSingleResponse);
		}
	}
	return items;
}

declare const madeByThroughPipeline: unique symbol;

/** An operation's routing as `throughPipeline` makes it; the type admits no other. */
export type PipelineRouting = INodePropertyRouting & { readonly [madeByThroughPipeline]: true };

/** An option of a resource's Operation parameter: its routing can only come from `throughPipeline`. */
export interface Operation extends INodePropertyOptions {
	routing: PipelineRouting;
}

/**
 * The routing of every operation: its request, sent by `executeThroughPipeline`. n8n's RoutingNode
 * (`makeRequest`) hands a request to `operations.pagination` only when `send.paginate` is true;
 * otherwise it sends the request itself, without the budget, the retries and the error mapping.
 */
export function throughPipeline(request: DeclarativeRestApiSettings.HttpRequestOptions): PipelineRouting {
	return { request, send: { paginate: true }, operations: { pagination: executeThroughPipeline } } as PipelineRouting;
}

/** postReceive of the Simplify option: proposal records as compact CRM rows. */
export async function simplifyProposalItems(
	this: IExecuteSingleFunctions,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[]> {
	if (!this.getNodeParameter('simplify', false)) return items;
	return items.map((item) => ({ ...item, json: simplifyProposal(item.json) }));
}
