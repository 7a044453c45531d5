import type {
	IExecuteFunctions,
	IHookFunctions,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';

import { MAIN_CONNECTION } from '../shared/n8nVersions';
import { releaseNode } from '../shared/processMemory';
import { assertReadyToReceive } from './activation';
import { deliveryFromRequest, type WebhookRequest } from './delivery';
import { isEventSelected } from './envelope';
import { acceptDelivery } from './onceOnly/acceptance';
import type { WatchedResponse } from './onceOnly/answerWatch';
import { claimRuns } from './onceOnly/claimRuns';
import { registerTrigger, urlEnding } from './onceOnly/listeningSessions';
import { isServiceSender } from './senderAllowlist';
import { verifyWithCredential } from './signingSecret';

interface TriggerOptions {
	verifySignatures?: boolean;
	onlyServiceSenders?: boolean;
}

interface PlainResponse extends WatchedResponse {
	writeHead(status: number, headers: Record<string, string>): unknown;
	end(body: string): unknown;
}

/** Answers a refused delivery; the service retries anything that is not a 200. */
function refuse(response: PlainResponse, status: number, message: string): IWebhookResponseData {
	response.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' });
	response.end(JSON.stringify({ message }));
	return { noWebhookResponse: true };
}

/** A 200 that starts no run: for deliveries whose run ended and events the node does not listen to. */
function acknowledgeWithoutRun(message: string): IWebhookResponseData {
	return { webhookResponse: { message } };
}

export class AgencyInboxTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Agency Inbox Trigger',
		name: 'agencyInboxTrigger',
		icon: { light: 'file:../../icons/agencyInbox.svg', dark: 'file:../../icons/agencyInbox.dark.svg' },
		group: ['trigger'],
		version: 1,
		subtitle: '={{$parameter["events"].join(", ")}}',
		// n8n's nodes panel merges this trigger with the Agency Inbox node (same name without "Trigger")
		// into one app and shows this description as the app's, so it describes the whole package.
		description:
			'Agency proposals, members, invitations, Master Inbox chat and bid intents on a freelance marketplace; this trigger starts a workflow on the service\'s signed webhooks',
		defaults: { name: 'Agency Inbox Trigger' },
		inputs: [],
		outputs: [MAIN_CONNECTION],
		credentials: [{ name: 'agencyInboxApi', required: true }],
		webhooks: [
			{
				name: 'default',
				httpMethod: 'POST',
				// n8n answers a delivery that starts a run when the run has ended: 200 (empty) once it did,
				// 500 when it failed. A run cut by a crash is never answered 200, so the service re-delivers it.
				responseMode: 'lastNode',
				responseData: 'noData',
				path: 'webhook',
			},
		],
		properties: [
			{
				displayName:
					"The service has no API to register webhooks: in its dashboard, add this node's Production URL as a webhook endpoint and paste that endpoint's signing secret (whsec_...) into Webhook Signing Secret of the Agency Inbox API credential. To use Listen for Test Event, add the Test URL as a second endpoint and paste its secret into Test Webhook Signing Secret.",
				name: 'setupNotice',
				type: 'notice',
				default: '',
			},
			{
				displayName: 'Events',
				name: 'events',
				type: 'multiOptions',
				required: true,
				default: ['*'],
				description: 'The events that start the workflow; other deliveries are acknowledged without a run',
				options: [
					{
						name: 'All Events',
						value: '*',
						description: 'Every delivery, including types the node does not know (labelled unknown)',
					},
					{
						name: 'Bid Intent Scheduled',
						value: 'bid_intent.scheduled',
						description: 'The automatic bidder schedules a bid',
					},
					{
						name: 'Chat Message Sent',
						value: 'chat.message.sent',
						description: 'The client sends a new message in a conversation',
					},
					{
						name: 'Message Attempt Exhausted',
						value: 'message.attempt.exhausted',
						description: 'All delivery attempts of a webhook have failed',
					},
					{
						name: 'Proposal Accepted',
						value: 'proposal.accepted',
						description: 'The client accepts a proposal on the marketplace',
					},
				],
			},
			{
				displayName: 'Options',
				name: 'options',
				type: 'collection',
				placeholder: 'Add option',
				default: {},
				options: [
					{
						displayName: 'Only Accept Service Sender Addresses',
						name: 'onlyServiceSenders',
						type: 'boolean',
						default: false,
						description:
							"Whether to refuse deliveries from addresses other than the service's senders (52.215.16.239, 54.216.8.72, 63.33.109.123, 2a05:d028:17:8000::/56). Behind a reverse proxy, n8n must be told how many proxies to trust (N8N_PROXY_HOPS) to see the sender's address.",
					},
					{
						displayName: 'Verify Signatures',
						name: 'verifySignatures',
						type: 'boolean',
						default: true,
						description:
							'Whether to refuse deliveries that are not signed with the signing secret of the URL in use. Turning this off lets anyone who knows the URL start the workflow.',
					},
				],
			},
		],
	};

	webhookMethods = {
		default: {
			// Nothing is registered remotely, so there is never anything to find or remove.
			async checkExists(this: IHookFunctions): Promise<boolean> {
				return false;
			},
			async create(this: IHookFunctions): Promise<boolean> {
				await assertReadyToReceive.call(this);
				registerTrigger(this);
				return true;
			},
			// Runs when the workflow is deactivated, and when a listening session ends: what this process keeps for that URL is let go.
			async delete(this: IHookFunctions): Promise<boolean> {
				releaseNode({ workflow: String(this.getWorkflow().id), node: this.getNode().id, url: urlEnding(this) });
				return true;
			},
		},
	};

	async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
		const request = this.getRequestObject() as unknown as WebhookRequest;
		const response = this.getResponseObject() as unknown as PlainResponse;
		const options = this.getNodeParameter('options', {}) as TriggerOptions;

		if (options.onlyServiceSenders && !isServiceSender(request.ip ?? request.socket?.remoteAddress)) {
			return refuse(response, 403, "The sender's address is not one of the service's webhook senders");
		}
		if (!request.rawBody && typeof request.readRawBody === 'function') await request.readRawBody();

		let verified: { id: string; timestampSeconds: number } | undefined;
		if (options.verifySignatures !== false) {
			const result = await verifyWithCredential(this, request.rawBody ?? Buffer.alloc(0), request.headers);
			if ('problem' in result) return refuse(response, 401, result.problem);
			if (!result.valid) return refuse(response, 401, `Webhook signature verification failed: ${result.reason}`);
			verified = result;
		}

		const delivery = deliveryFromRequest(request, verified);
		const selectedEvents = this.getNodeParameter('events', ['*']) as string[];
		if (!isEventSelected(delivery.event, selectedEvents)) {
			return acknowledgeWithoutRun(`Event ${delivery.event} is not selected in the trigger; no run`);
		}
		const acceptance = acceptDelivery(this, delivery, response);
		if (acceptance.outcome === 'ran') return acknowledgeWithoutRun('Delivery already run; no second run');
		if (acceptance.outcome === 'running') {
			return refuse(response, 409, 'Delivery is being run; it is acknowledged once its run has ended');
		}
		// n8n answers when the run has ended (responseMode lastNode).
		return { workflowData: [[{ json: acceptance.item }]] };
	}

	/** The first step of the run a delivery started: the run goes on only if it is the delivery's one run (onceOnly/claimRuns.ts). */
	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return [await claimRuns(this, this.getInputData())];
	}
}
