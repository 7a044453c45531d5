/**
 * What the Start From tests in a real n8n share (test/e2e/startFrom.test.ts, test/queue/startFrom.test.ts):
 * the three polling triggers with a date, the history the sandbox holds and what of it the backfill owes,
 * the CRM rows the workflows post, and a hold on a room's messages asked for through the proxy, to
 * interrupt n8n in the middle of a poll of the backfill.
 */
import type { Sandbox } from '../../sandbox';
import { NODE_TYPES } from '../../scripts/n8n/agencyInbox';
import type { LoopbackProxy } from '../nodes/AgencyInboxProposalTrigger/loopbackProxy';
import { getJson, postJson, sleep, waitFor } from './support';

const DAY_MS = 86_400_000;
export const KINDS = ['message', 'proposal', 'invitation'] as const;
export type Kind = (typeof KINDS)[number];

export interface CrmRow {
	kind: Kind;
	key: string;
	backfilled: boolean;
}

export interface StartFromTrigger {
	/** Suffix of the workflow's id and name. */
	kind: Kind;
	trigger: { name: string; type: (typeof NODE_TYPES)[keyof typeof NODE_TYPES]; parameters: Record<string, unknown> };
	/** The CRM row of an item: an n8n expression without `={{ }}`. */
	row: string;
}

/** The three triggers with Start From: A Date, each item a CRM row {kind, key, backfilled}. */
export function startFromTriggers(startDate: string): StartFromTrigger[] {
	const startFrom = { startFrom: 'date', startDate };
	return [
		{
			kind: 'message',
			trigger: { name: 'Client Message', type: NODE_TYPES.messageTrigger, parameters: startFrom },
			row: "{ kind: 'message', key: $json.message.storyId, backfilled: $json.backfilled }",
		},
		{
			kind: 'proposal',
			trigger: { name: 'Proposal Changed', type: NODE_TYPES.proposalTrigger, parameters: { triggerOn: 'both', simplify: true, filters: {}, ...startFrom } },
			row: "{ kind: 'proposal', key: $json.uid + ' ' + $json.updatedAt, backfilled: $json.backfilled }",
		},
		{
			kind: 'invitation',
			trigger: { name: 'Invitation', type: NODE_TYPES.invitationTrigger, parameters: { triggerOn: 'new', ...startFrom } },
			row: "{ kind: 'invitation', key: $json.invite.uid, backfilled: $json.backfilled }",
		},
	];
}

export interface HistorySizes {
	messages: number;
	proposals: number;
	invitations: number;
}

/**
 * A history of 30 days in the sandbox (its `recentHistory` change) and the date 20 days back. What the
 * backfill owes is read from the sandbox's records after the activation (`owedHistory`).
 */
export async function makeHistory(sandboxOrigin: string, sizes: HistorySizes): Promise<{ startDate: string; startDateMs: number; historyEndMs: number }> {
	await postJson(`${sandboxOrigin}/_sandbox/changes`, { kind: 'recentHistory', ...sizes, days: 30 });
	const historyEndMs = Date.now();
	const startDateMs = historyEndMs - 20 * DAY_MS;
	return { startDate: new Date(startDateMs).toISOString(), startDateMs, historyEndMs };
}

/** What the backfill owes, by kind, sorted: the sandbox's records written or changed between the date and the history's end. */
export function owedHistory(sandbox: Sandbox, startDateMs: number, historyEndMs: number): Record<Kind, string[]> {
	const members = new Set(sandbox.state.members.map((member) => member.uid));
	const within = (iso: string | null) => iso !== null && Date.parse(iso) >= startDateMs && Date.parse(iso) <= historyEndMs;
	return {
		message: Object.values(sandbox.state.stories)
			.flat()
			.filter((story) => !members.has(story.userId) && within(story.createdAt))
			.map((story) => story.storyId)
			.sort(),
		proposal: sandbox.state.proposals.filter(({ proposal }) => within(proposal.updatedAt)).map(({ proposal }) => `${proposal.uid} ${proposal.updatedAt}`).sort(),
		invitation: sandbox.state.invitations.filter(({ invite }) => within(invite.createdAt)).map(({ invite }) => invite.uid).sort(),
	};
}

export const crmRows = (sandboxOrigin: string) => getJson<{ data: CrmRow[] }>(`${sandboxOrigin}/_sandbox/crm`).then((answer) => answer.data);
export const keysOf = (rows: CrmRow[], kind: Kind) => rows.filter((row) => row.kind === kind).map((row) => row.key).sort();

/** A live event made through the sandbox: its CRM key. */
export async function liveClientMessage(sandboxOrigin: string, roomId: string): Promise<string> {
	const { data } = await postJson<{ data: { storyId: string } }>(`${sandboxOrigin}/_sandbox/changes`, { kind: 'clientMessage', roomId, text: 'written during the backfill' });
	return String(data.storyId);
}
export async function liveInvitation(sandboxOrigin: string): Promise<string> {
	const { data } = await postJson<{ data: { invite: { uid: string } } }>(`${sandboxOrigin}/_sandbox/changes`, { kind: 'newInvitation' });
	return data.invite.uid;
}

/** Slows or holds, on request, the requests for a room's messages that pass the proxy (it owns the proxy's `beforeForward`). */
export class RoomReadHold {
	/** While above 0, each room read waits this long before it reaches the service (polls then overlap). */
	slowReadsMs = 0;
	private onRoomRead?: () => Promise<void>;

	constructor(proxy: LoopbackProxy) {
		proxy.beforeForward = async (request) => {
			if (!request.path.endsWith('/stories')) return;
			if (this.slowReadsMs > 0) await sleep(this.slowReadsMs);
			await this.onRoomRead?.();
		};
	}

	/**
	 * Waits for the next room read of a poll, holds it 3 s (the polls of the other triggers end), then
	 * calls `interrupt` (n8n stopped or killed) and lets the held request go on to an n8n that is gone.
	 */
	async interruptInTheMiddleOfAPoll(interrupt: () => Promise<void>): Promise<void> {
		let release = () => {};
		const released = new Promise<void>((resolve) => (release = resolve));
		const held = new Promise<void>((resolve) => {
			this.onRoomRead = async () => {
				this.onRoomRead = undefined;
				resolve();
				await released;
			};
		});
		await held;
		await sleep(3_000);
		await interrupt();
		release();
	}
}

/** Waits until every expected key of each kind is in the CRM; returns the seconds it took. */
export async function waitForEveryKey(sandboxOrigin: string, expected: Record<Kind, string[]>, timeoutMs: number): Promise<number> {
	const startedAt = Date.now();
	const complete = (rows: CrmRow[]) => KINDS.every((kind) => expected[kind].every((key) => keysOf(rows, kind).includes(key)));
	await waitFor('every item since the date in the CRM', () => crmRows(sandboxOrigin), complete, timeoutMs);
	return Math.round((Date.now() - startedAt) / 1000);
}

/** "messages 300 of 2713, proposals …": the CRM rows of each kind against what is expected. */
export const progressFigures = (rows: CrmRow[], expected: Record<Kind, string[]>) => KINDS.map((kind) => `${kind}s ${keysOf(rows, kind).length} of ${expected[kind].length}`).join(', ');
