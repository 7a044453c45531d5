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

/** A delivery whose runs were cut `attempts` times (their processes stopped in the middle): this run does not try again. */
export function cutTooOften(context: IExecuteFunctions, deliveryIds: string[], attempts: number): NodeOperationError {
	return new NodeOperationError(
		context.getNode(),
		`Delivery ${deliveryIds.join(', ')} was started by ${attempts} runs whose n8n process stopped before they ended, so this run stops before the next node`,
		{
			description:
				"Find why n8n's workers stop in the middle of this workflow (out of memory, killed by the host): each further delivery of the event fails the same way. n8n answers the service with an error, and it delivers the event again until its retry schedule ends.",
		},
	);
}
