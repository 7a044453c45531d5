import type { IHookFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { httpStatusOf } from '../shared/errors';
import { agencyInboxApiRequest } from '../shared/serviceClient';
import { CREDENTIAL_TYPE } from '../shared/transport';
import { signingKeyFor } from './signingSecret';

/** Activations a user is watching; on a restart a brief outage must not keep the webhook down. */
const USER_ACTIVATIONS = ['activate', 'update', 'manual'];

/** What went wrong, per status; without one, the pipeline's own message (a network error or an n8n-internal cause). */
function reachabilityProblem(status: number | undefined, message: string): string {
	switch (status) {
		case 401:
			return 'no API key reached the service (HTTP 401). Paste the key from Integrations into API Key.';
		case 403:
			return 'the service rejected the API key (HTTP 403). Create a new key under Integrations and paste it into API Key.';
		case 404:
			return 'nothing answers at the Base URL (HTTP 404). It must be the API host followed by /service.';
		case undefined:
			return `GET /v1/agency failed: ${message.replace(/\.$/, '')}. Check the Base URL and that the service is up.`;
		default:
			return `the service answered GET /v1/agency with HTTP ${status}.`;
	}
}

async function assertServiceReachable(this: IHookFunctions): Promise<void> {
	try {
		// The one request pipeline: shared budget, retries of reads, no API key in errors.
		await agencyInboxApiRequest.call(this, 'GET', '/v1/agency');
	} catch (error) {
		throw new NodeOperationError(
			this.getNode(),
			`Cannot activate the Agency Inbox Trigger: ${reachabilityProblem(httpStatusOf(error), (error as Error).message)}`,
		);
	}
}

/**
 * The service has no API to register webhooks, so activation registers nothing; it fails early
 * instead when deliveries could not be accepted: no signing secret for the URL in use, or a
 * credential that cannot reach the service.
 */
export async function assertReadyToReceive(this: IHookFunctions): Promise<void> {
	const verifySignatures = this.getNodeParameter('options.verifySignatures', true) as boolean;
	if (verifySignatures) {
		const signingKey = signingKeyFor(await this.getCredentials(CREDENTIAL_TYPE), this.getMode());
		if ('problem' in signingKey) {
			throw new NodeOperationError(this.getNode(), `Cannot activate the Agency Inbox Trigger: ${signingKey.problem}`);
		}
	}
	if (USER_ACTIVATIONS.includes(this.getActivationMode())) await assertServiceReachable.call(this);
}
