/** Activity simulator: every interval one client-side change, chosen deterministically from the seed. */
import { applyChange, type ChangeKind } from './changes';
import type { SandboxCore } from './core';
import { Random } from './random';

export const DEFAULT_SIMULATOR_INTERVAL_MS = 5_000;

type ChangeBody = { kind: ChangeKind } & Record<string, unknown>;

/**
 * Weighted so that replies and views are common, hires and new bids rarer. `count: 2` puts two client
 * messages in one room between two polls; an invitation's answer is picked when it is due (see answerInvitation).
 */
const WEIGHTED_KINDS: ChangeKind[] = ['clientReply', 'clientReply', 'viewed', 'viewed', 'hire', 'newProposal', 'newProposal', 'clientMessage', 'clientMessage', 'scheduleBid', 'newInvitation', 'invitationStatus'];
const ACTIVITY: ChangeBody[] = [...WEIGHTED_KINDS.map((kind) => ({ kind })), { kind: 'clientMessage', count: 2 }];

/**
 * The first ticks go through every kind once, so a newcomer watching `npm start` sees each sample
 * workflow run within the first minute (7 ticks at its 8 s interval); then the weighted mix.
 */
export const FIRST_ROUND: ChangeKind[] = ['clientMessage', 'scheduleBid', 'newProposal', 'clientReply', 'viewed', 'hire', 'newInvitation'];

/** The room of a message, the id of a scheduled bid intent, the invitation's uid, else the proposal's uid. */
function subjectOf(kind: ChangeKind, result: unknown): string {
	if (kind === 'clientMessage' || kind === 'agencyMessage') return (result as { roomId: string }).roomId;
	if (kind === 'scheduleBid') return (result as { id: string }).id;
	if (kind === 'newInvitation' || kind === 'invitationStatus') return (result as { invite: { uid: string } }).invite.uid;
	return (result as { proposal: { uid: string } }).proposal.uid;
}

export class Simulator {
	private timer: NodeJS.Timeout | undefined;
	private rng: Random;
	intervalMs = DEFAULT_SIMULATOR_INTERVAL_MS;
	ticks = 0;
	readonly countsByKind: Partial<Record<ChangeKind, number>> = {};
	/**
	 * The latest changes, each with what it touched and how many (the client messages of one change), so a
	 * watcher can follow it to the sample workflow it starts.
	 */
	readonly recent: Array<{ kind: ChangeKind; subject: string; count: number; at: string }> = [];

	constructor(
		private readonly core: SandboxCore,
		private readonly seed: number,
	) {
		this.rng = new Random(seed ^ 0x51a1);
	}

	get running(): boolean {
		return this.timer !== undefined;
	}

	start(intervalMs = DEFAULT_SIMULATOR_INTERVAL_MS): void {
		if (!Number.isFinite(intervalMs) || intervalMs < 1) throw new Error('intervalMs must be a positive number.');
		this.stop();
		this.intervalMs = intervalMs;
		this.timer = setInterval(() => this.tick(), intervalMs);
	}

	stop(): void {
		if (this.timer !== undefined) clearInterval(this.timer);
		this.timer = undefined;
	}

	/** Restarts the deterministic sequence (after a reset). */
	rewind(): void {
		this.rng = new Random(this.seed ^ 0x51a1);
		this.ticks = 0;
		this.recent.length = 0;
		for (const kind of Object.keys(this.countsByKind)) delete this.countsByKind[kind as ChangeKind];
	}

	tick(): ChangeKind {
		const planned = this.ticks < FIRST_ROUND.length ? { kind: FIRST_ROUND[this.ticks] } : this.rng.pick(ACTIVITY);
		const body = planned.kind === 'invitationStatus' ? this.answerInvitation() : planned;
		const { kind } = body;
		const subject = subjectOf(kind, applyChange(this.core, body));
		this.ticks++;
		this.countsByKind[kind] = (this.countsByKind[kind] ?? 0) + 1;
		this.recent.push({ kind, subject, count: typeof body.count === 'number' ? body.count : 1, at: new Date().toISOString() });
		if (this.recent.length > 100) this.recent.shift();
		return kind;
	}

	/** A pending invitation accepted or declined; with none pending, a new invitation arrives instead. */
	private answerInvitation(): ChangeBody {
		const pending = this.core.state.invitations.filter((i) => i.invite.status === 'PENDING');
		if (pending.length === 0) return { kind: 'newInvitation' };
		return { kind: 'invitationStatus', invitationUid: this.rng.pick(pending).invite.uid, status: this.rng.pick(['accepted', 'declined']) };
	}

	status() {
		return { running: this.running, intervalMs: this.intervalMs, ticks: this.ticks, countsByKind: { ...this.countsByKind }, recent: this.recent.slice(-20) };
	}
}
