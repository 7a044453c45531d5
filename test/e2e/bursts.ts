/**
 * Bursts of signed deliveries into a real n8n, as the service's retries send them after an outage:
 * each delivery starts the chat auto-reply (Proposal Get, then Send Message as the proposal's
 * freelancer, naming the delivery id), so runs call the service and overlap for minutes.
 */
import type { Sandbox } from '../../sandbox';
import type { SentMessage } from '../../sandbox/types';
import { NODE_TYPES } from '../../scripts/n8n/agencyInbox';
import type { WorkflowToImport } from '../../scripts/n8n/harness';
import { deliverAsTheService } from '../../scripts/n8n/signedWebhook';
import { getJson, sleep, waitFor } from './support';

/** The trigger's answer to a delivery whose run ended; a delivery that starts a run is answered when its run has ended, 200 and no body. */
export const ALREADY_RUN = 'Delivery already run; no second run';
const REPLY_PREFIX = 'Auto-reply to delivery ';

export interface BurstDelivery {
	deliveryId: string;
	proposalUid: string;
	roomId: string;
}

/** Trigger → Get Proposal → Send Auto-Reply, the shape of the chat auto-reply sample. */
export function burstReplyWorkflow(id: string, webhookId: string, credential: { id: string; name: string }): WorkflowToImport {
	const credentials = { agencyInboxApi: credential };
	const byId = (value: string) => ({ __rl: true, mode: 'id', value });
	return {
		id,
		name: 'Burst: auto-reply per delivery',
		nodes: [
			{ id: `${id}-trigger`, name: 'Client Message', type: NODE_TYPES.trigger, typeVersion: 1, position: [0, 0], webhookId, parameters: { events: ['chat.message.sent'], options: {} }, credentials },
			{
				id: `${id}-get`,
				name: 'Get Proposal',
				type: NODE_TYPES.action,
				typeVersion: 1,
				position: [240, 0],
				parameters: { resource: 'proposal', operation: 'get', proposalId: byId('={{ $json.payload.proposal.uid }}') },
				credentials,
			},
			{
				id: `${id}-send`,
				name: 'Send Auto-Reply',
				type: NODE_TYPES.action,
				typeVersion: 1,
				position: [480, 0],
				parameters: {
					resource: 'message',
					operation: 'send',
					roomId: byId("={{ $('Client Message').item.json.payload.chat.id }}"),
					freelancerUid: byId('={{ $json.freelancer.uid }}'),
					message: `=${REPLY_PREFIX}{{ $('Client Message').item.json.deliveryId }}`,
				},
				credentials,
			},
		],
		connections: {
			'Client Message': { main: [[{ node: 'Get Proposal', type: 'main', index: 0 }]] },
			'Get Proposal': { main: [[{ node: 'Send Auto-Reply', type: 'main', index: 0 }]] },
		},
		settings: { executionOrder: 'v1' },
	};
}

/** `count` deliveries with distinct ids, over the rooms whose proposal's freelancer may send. */
export function burstDeliveries(sandbox: Sandbox, prefix: string, count: number): BurstDelivery[] {
	const rooms = sandbox.state.rooms.filter((room) => {
		const proposal = room.vendorProposal && sandbox.state.proposals.find((record) => record.proposal.uid === room.vendorProposal!.id);
		return proposal && !sandbox.state.unauthorizedFreelancers.includes(proposal.freelancer.uid);
	});
	return Array.from({ length: count }, (_, index) => {
		const room = rooms[index % rooms.length];
		return { deliveryId: `msg_${prefix}_${index + 1}`, proposalUid: room.vendorProposal!.id, roomId: room.roomId };
	});
}

export interface DeliveryAnswer {
	deliveryId: string;
	/** The status of the last attempt. */
	status: number;
	message?: string;
	/**
	 * Attempts until a 200 (or the last one): under a burst n8n may answer 503 while its database is
	 * busy, and the trigger answers 409 while another attempt's run of the same id goes on.
	 */
	attempts: number;
	/** When the first attempt was sent (ms). */
	sentAt: number;
	/** When the last attempt was answered (ms): once the delivery's run has ended. */
	answeredAt: number;
}

async function deliverUntilAccepted(webhookUrl: string, signingSecret: string, delivery: BurstDelivery): Promise<DeliveryAnswer> {
	const data = { proposal: { uid: delivery.proposalUid }, chat: { id: delivery.roomId }, message: { text: 'Are you available?' } };
	const sentAt = Date.now();
	const answer = await deliverAsTheService(webhookUrl, signingSecret, 'chat.message.sent', data, delivery.deliveryId);
	return { deliveryId: delivery.deliveryId, status: answer.status, message: answer.body.message, attempts: answer.statuses.length, sentAt, answeredAt: answer.answeredAt };
}

/**
 * Posts each delivery `spacingMs` after the previous one, without waiting for answers in between; a
 * delivery not answered 200 is sent again on the service's retry schedule (deliverAsTheService).
 */
export async function postBurst(webhookUrl: string, signingSecret: string, deliveries: BurstDelivery[], spacingMs: number): Promise<DeliveryAnswer[]> {
	const answers: Array<Promise<DeliveryAnswer>> = [];
	for (const delivery of deliveries) {
		answers.push(deliverUntilAccepted(webhookUrl, signingSecret, delivery));
		await sleep(spacingMs);
	}
	return await Promise.all(answers);
}

/**
 * The answers that do not say "this delivery ran once": each is 200 without a body once its run has
 * ended, or, for an attempt after one that got no answer in time (a run that outlasted the sender's
 * wait, see TEST_ANSWER_TIMEOUT_MS), 200 "already run". A first attempt is never told so.
 */
export function notAnsweredAsRunOnce(answers: DeliveryAnswer[]): DeliveryAnswer[] {
	return answers.filter((answer) => answer.status !== 200 || (answer.message !== undefined && !(answer.attempts > 1 && answer.message === ALREADY_RUN)));
}

/** Deliveries that had to be sent again before n8n answered 200, for the figures. */
export function retried(answers: DeliveryAnswer[]): number {
	return answers.filter((answer) => answer.attempts > 1).length;
}

/** Every id twice, in a shuffled (seeded) order. */
export function eachTwiceShuffled<T>(values: T[], seed = 7): T[] {
	const doubled = [...values, ...values];
	let state = seed;
	const random = () => ((state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
	for (let index = doubled.length - 1; index > 0; index--) {
		const other = Math.floor(random() * (index + 1));
		[doubled[index], doubled[other]] = [doubled[other], doubled[index]];
	}
	return doubled;
}

/** The auto-replies the service stored, oldest first: the delivery id each names and when (ms). */
async function autoReplies(sandboxOrigin: string): Promise<Array<{ deliveryId: string; at: number }>> {
	const messages = (await getJson<{ data: SentMessage[] }>(`${sandboxOrigin}/_sandbox/messages`)).data;
	return messages
		.filter((sent) => sent.message.startsWith(REPLY_PREFIX))
		.map((sent) => ({ deliveryId: sent.message.slice(REPLY_PREFIX.length).trim(), at: Date.parse(sent.createdAt) }));
}

/** How many auto-replies the service received per delivery id (ids with none are absent). */
export async function repliesPerDelivery(sandboxOrigin: string): Promise<Map<string, number>> {
	const counts = new Map<string, number>();
	for (const { deliveryId } of await autoReplies(sandboxOrigin)) counts.set(deliveryId, (counts.get(deliveryId) ?? 0) + 1);
	return counts;
}

/** When the service stored each delivery's first auto-reply (ms), per delivery id. */
export async function firstReplyTimes(sandboxOrigin: string): Promise<Map<string, number>> {
	const times = new Map<string, number>();
	for (const { deliveryId, at } of await autoReplies(sandboxOrigin)) times.set(deliveryId, Math.min(at, times.get(deliveryId) ?? Infinity));
	return times;
}

/** Per delivery id, the replies that are not exactly one: empty when every delivery ran once. */
export function notExactlyOnce(counts: Map<string, number>, deliveries: BurstDelivery[]): Record<string, number> {
	return Object.fromEntries(deliveries.map((delivery) => [delivery.deliveryId, counts.get(delivery.deliveryId) ?? 0]).filter(([, count]) => count !== 1));
}

/** Waits until each delivery has its reply, then a little longer for any second one; returns how long the replies took. */
export async function expectOneReplyEach(sandboxOrigin: string, deliveries: BurstDelivery[], timeoutMs: number): Promise<number> {
	const startedAt = Date.now();
	await waitFor(`a reply to each of ${deliveries.length} deliveries`, () => repliesPerDelivery(sandboxOrigin), (counts) => deliveries.every((delivery) => counts.has(delivery.deliveryId)), timeoutMs);
	const tookMs = Date.now() - startedAt;
	await sleep(10_000);
	expect(notExactlyOnce(await repliesPerDelivery(sandboxOrigin), deliveries)).toEqual({});
	return tookMs;
}
