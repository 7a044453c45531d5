import type { IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

/** A claim n8n's database refused: the run fails before the next node, n8n answers 500 and the service retries. */
export function couldNotRecord(context: IExecuteFunctions, deliveryIds: string[]): NodeOperationError {
	return new NodeOperationError(
		context.getNode(),
		`Could not record the start of the run for delivery ${deliveryIds.join(', ')} in n8n's database, so the workflow did not go on (to never run one delivery twice)`,
		{ description: "Check that n8n can write to its database. n8n answers this delivery with an error, so the service delivers it again on its retry schedule." },
	);
}
