import type {
	DeclarativeRestApiSettings,
	IExecutePaginationFunctions,
	IExecuteSingleFunctions,
	IHttpRequestOptions,
	INodeExecutionData,
} from 'n8n-workflow';

import { collectRecords } from '../../shared/pagination';
import { simplifyProposal } from '../../shared/simplifyProposal';
import { requestEnvelope, withPageCursor } from '../../shared/transport';

/** The Limit of a list operation (routing.output.maxResults), or no limit for Return All. */
export function limitOf(requestData: DeclarativeRestApiSettings.ResultOptions): number {
	const limit = Number(requestData.maxResults);
	return Number.isFinite(limit) && limit > 0 ? limit : Infinity;
}

/**
 * The declarative engine's `requestOperations.pagination`, run for every operation (each one sets
 * `send.paginate`): sends through the pipeline, follows cursors for lists, and emits one item per
 * record paired to the input item. postReceive functions declared in the description then run.
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

/** postReceive of the Simplify option: proposal records as compact CRM rows. */
export async function simplifyProposalItems(
	this: IExecuteSingleFunctions,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[]> {
	if (!this.getNodeParameter('simplify', false)) return items;
	return items.map((item) => ({ ...item, json: simplifyProposal(item.json) }));
}
