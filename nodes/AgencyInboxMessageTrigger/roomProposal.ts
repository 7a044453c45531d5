/**
 * A room's proposals for the Message Trigger's items. The spec links a proposal to its room by the
 * proposal's `chatRoomId`; it does not say that a room's `vendorProposal.id` is a proposal's `uid`. So
 * the trigger keeps an index of the agency's proposals by `chatRoomId` (proposalIndex.ts), read with
 * the `updatedSince` procedure: one full pass, at most MAX_PAGES_PER_POLL pages a poll, from the first
 * poll after the activation's (n8n awaits that one before it reports the workflow published); then, in a poll that found client messages, one sweep of the changes since the last one (one request
 * in the usual case) before the index answers. A poll that finds a client message while the full pass
 * goes on reads the pass on first (its share of pages); where the pass is still not through, the room's
 * `vendorProposal.id` is looked up and taken only where the service confirms it as this room's, and
 * otherwise the message waits for the pass (at most WAIT_FOR_PASS_AT_MOST_MS from the pass's start):
 * the first message after an activation carries its proposal whatever the room's ids are. Where the
 * index cannot answer otherwise (a failed read, the room's proposals dropped to keep the state small)
 * the item has the confirmed proposal or none, and its notice says why.
 */
import type { CanContinue } from '../shared/guardedPoll';
import { timeOf } from '../shared/marks';
import type { FetchProposalPage } from '../shared/proposalSweep';
import { sweepProposals } from '../shared/proposalSweep';
import { sweepSinceWatermark } from '../shared/proposalWatermark';
import type { KeptProposal, ProposalIndexState } from './proposalIndex';
import { loadProposalIndex, MAX_PROPOSALS_KEPT, newProposalIndex, roomInIndex, takeIntoIndex } from './proposalIndex';
import type { FetchProposal, RoomRow } from './types';

/** A proposal of a room as an item shows it. */
export interface ProposalSummary {
	uid: string;
	status: string | null;
	updatedAt: string | null;
	freelancer: { uid: string; name: string | null } | null;
}

/** What an item says of its room's proposals. */
export interface RoomProposalFinding {
	/** The room's most recently updated proposal, or the one the room names where the service confirms it; null when none is known. */
	proposal: ProposalSummary | null;
	/** Every proposal whose chatRoomId is the room, most recently updated first; null when the trigger does not know them all. */
	proposals: ProposalSummary[] | null;
	/** Whether `proposals` lists every proposal of the room: not past MAX_PROPOSALS_PER_ROOM, nor where the trigger dropped some to stay within its bound. */
	proposalsComplete: boolean;
	notice?: string;
}

/** What a lookup of a room's `vendorProposal.id` found: the proposal, or null when it is not this room's. */
export interface ProposalLookup {
	vendorId: string;
	proposal: ProposalSummary | null;
}

/** The Message Trigger's state of its rooms' proposals. */
export interface RoomProposalsState {
	/** Absent until the first poll starts reading the proposal list. */
	index?: ProposalIndexState;
	/** Rooms whose `vendorProposal.id` was looked up while the full pass goes on, by room id. */
	lookups?: Record<string, ProposalLookup>;
}

export interface RoomProposalSources {
	fetchProposal: FetchProposal;
	fetchProposalsPage: FetchProposalPage;
	canContinue: CanContinue;
	/** The time now, in milliseconds (Date.now): the full pass notes it as its starting point (rule 5). */
	now: () => number;
}

/** Most pages of the proposal list a poll reads: the full pass and a backlog of changes spread over polls, so messages are not held up. */
export const MAX_PAGES_PER_POLL = 10;
/**
 * Longest a client message waits for the full pass, from the pass's start, where nothing else tells its
 * room's proposal: 30 polls a minute apart read 300 pages (30,000 proposals at 100 a page). Past it the
 * message goes out without, and its notice says why: a list that cannot be read holds back no message for ever.
 */
export const WAIT_FOR_PASS_AT_MOST_MS = 30 * 60_000;
/** What `of` answers for a message that waits for the full pass. */
export const WAIT_FOR_PROPOSALS = 'wait for the proposal list';
/** Most lookups kept; past it the oldest are dropped (looked up again when their room gets a message). */
export const MAX_PROPOSAL_LOOKUPS = 500;
/** Longest failure text kept for the notice. */
const MAX_FAILURE_LENGTH = 300;

const vendorIdOf = (room: RoomRow) => (typeof room.vendorProposal?.id === 'string' && room.vendorProposal.id !== '' ? room.vendorProposal.id : undefined);

const isLookup = (value: unknown): value is ProposalLookup => typeof (value as ProposalLookup)?.vendorId === 'string' && typeof (value as ProposalLookup).proposal === 'object';

/** The stored state, checked; what does not check out is read anew. */
export function loadRoomProposals(value: unknown): RoomProposalsState {
	const stored = value as RoomProposalsState | undefined;
	const index = loadProposalIndex(stored?.index);
	const lookups = Object.fromEntries(Object.entries(stored?.lookups ?? {}).filter(([, lookup]) => isLookup(lookup)));
	return { ...(index ? { index } : {}), ...(Object.keys(lookups).length > 0 ? { lookups } : {}) };
}

const failureText = (error: unknown) => (error instanceof Error ? error.message : String(error)).slice(0, MAX_FAILURE_LENGTH);

/** The finding for Fetch Test Event, which reads no proposal. */
export const PROPOSALS_NOT_READ: RoomProposalFinding = {
	proposal: null,
	proposals: null,
	proposalsComplete: false,
	notice: "Fetch Test Event reads no proposal: payload.proposal and room.proposals are null here. In the active workflow they are the room's.",
};

/**
 * The rooms' proposals during one poll: `of(room)` for each room with a client message, `advance()` at
 * the end (reads on where the list is not read through yet) for the state to keep.
 */
export class RoomProposals {
	private index: ProposalIndexState | undefined;

	private lookups: Record<string, ProposalLookup>;

	private pagesLeft = MAX_PAGES_PER_POLL;

	/** Whether this poll brought the index up to date; a reason why not otherwise; undefined before it tried. */
	private upToDate: true | string | undefined;

	private passEndedThisPoll = false;

	constructor(
		stored: RoomProposalsState,
		private readonly sources: RoomProposalSources,
	) {
		// A copy to change: static data n8n loaded is a proxy, which structuredClone cannot copy.
		this.index = stored.index && (JSON.parse(JSON.stringify(stored.index)) as ProposalIndexState);
		this.lookups = { ...(stored.lookups ?? {}) };
	}

	/** Takes one page of this poll's share, if any is left and the poll has time. */
	private takePage(): boolean {
		if (this.pagesLeft <= 0 || !this.sources.canContinue()) return false;
		this.pagesLeft--;
		return true;
	}

	/**
	 * What the item of a client message in `room` says of its proposals, or WAIT_FOR_PROPOSALS: the
	 * message should wait for the full pass (the room is read again by the next poll).
	 */
	async of(room: RoomRow): Promise<RoomProposalFinding | typeof WAIT_FOR_PROPOSALS> {
		const index = (this.index ??= newProposalIndex(new Date(this.sources.now())));
		if (index.pass) await this.readPassNoting(index, index.pass);
		if (index.pass) {
			const failed = index.failure ? `; the last read failed: ${index.failure}` : '';
			const progress = `about ${index.pass.read} of ${index.pass.total ?? 'all'} read; ${MAX_PAGES_PER_POLL} pages a poll${failed}`;
			const finding = await this.fallback(room, `The trigger is still reading the agency's proposals to find each room's (${progress}), so room.proposals is null.`);
			return finding.proposal === null && this.mayWaitForPass(index) ? WAIT_FOR_PROPOSALS : finding;
		}
		this.upToDate ??= await this.readChanges(index);
		if (this.upToDate !== true) {
			// The pass ended in this poll and took its pages: the next poll reads the changes since its start first.
			if (this.passEndedThisPoll && this.mayWaitForPass(index)) return WAIT_FOR_PROPOSALS;
			return await this.fallback(room, this.upToDate);
		}
		const known = roomInIndex(index, room.roomId);
		if (!known.known) {
			return await this.fallback(
				room,
				`The trigger keeps at most ${MAX_PROPOSALS_KEPT} proposals, those of the rooms whose proposals changed last, and this room's are not among them, so room.proposals is null.`,
			);
		}
		const proposals = known.proposals.map((kept) => this.summaryOf(kept));
		const vendorId = vendorIdOf(room);
		return {
			proposal: proposals[0] ?? null,
			proposals,
			proposalsComplete: !known.more,
			...(proposals.length === 0 && vendorId !== undefined
				? { notice: `The room names the marketplace proposal ${vendorId}, but no proposal of this agency has this room as its chat room, so payload.proposal is null.` }
				: {}),
		};
	}

	/** The state to keep: the full pass or a backlog of changes read on within this poll's share of pages. */
	async advance(): Promise<RoomProposalsState> {
		this.index ??= newProposalIndex(new Date(this.sources.now()));
		const index = this.index;
		if (index.pass) await this.readPassNoting(index, index.pass);
		else if (index.since.pending && this.upToDate === undefined) await this.readChanges(index);
		// Lookups are kept only while the full pass goes on: later, a room the index dropped is looked up
		// afresh in each poll it gets a message (its proposal may have moved since).
		return { index, ...(index.pass && Object.keys(this.lookups).length > 0 ? { lookups: this.lookups } : {}) };
	}

	/** The full pass read on; a failure is noted for the notice, and the next poll tries again. */
	private async readPassNoting(index: ProposalIndexState, pass: NonNullable<ProposalIndexState['pass']>): Promise<void> {
		try {
			await this.readPass(index, pass);
		} catch (error) {
			index.failure = failureText(error);
		}
	}

	/** Whether a message may still wait for the pass: it started (the clock noted before it, rule 5) less than WAIT_FOR_PASS_AT_MOST_MS ago. */
	private mayWaitForPass(index: ProposalIndexState): boolean {
		return this.sources.now() - timeOf(index.since.watermark.at) < WAIT_FOR_PASS_AT_MOST_MS;
	}

	/** Rule 5's full pass, resumed where the last poll stopped; a stale cursor (400) starts it over (in sweepProposals). */
	private async readPass(index: ProposalIndexState, pass: NonNullable<ProposalIndexState['pass']>): Promise<void> {
		if (!this.takePage()) return;
		const sweep = await sweepProposals(this.sources.fetchProposalsPage, { startCursor: pass.cursor, canContinue: () => this.takePage() });
		takeIntoIndex(index, sweep.records);
		delete index.failure;
		if (sweep.complete) {
			delete index.pass;
			this.passEndedThisPoll = true;
			return;
		}
		index.pass = { cursor: sweep.nextCursor, read: (sweep.restarted ? 0 : pass.read) + sweep.records.length, total: sweep.total ?? pass.total };
	}

	/** The changes since the last sweep (updatedSince); true once every one is in the index, else why not. */
	private async readChanges(index: ProposalIndexState): Promise<true | string> {
		const notice = (why: string) => `${why}, so room.proposals is null.`;
		if (!this.takePage()) return notice('The trigger had no time left in this poll to read the proposals changed since its last poll');
		try {
			const sweep = await sweepSinceWatermark(index.since, this.sources.fetchProposalsPage, { canContinue: () => this.takePage() });
			takeIntoIndex(index, sweep.records);
			index.since = sweep.state;
			delete index.failure;
			return sweep.complete ? true : notice(`The trigger has not read every proposal changed since its last poll yet (${MAX_PAGES_PER_POLL} pages a poll)`);
		} catch (error) {
			index.failure = failureText(error);
			return notice(`The trigger could not read the proposals changed since its last poll (${index.failure})`);
		}
	}

	private summaryOf([uid, status, updatedAt, freelancerUid]: KeptProposal): ProposalSummary {
		return { uid, status, updatedAt, freelancer: freelancerUid === null ? null : { uid: freelancerUid, name: this.index?.freelancers[freelancerUid] ?? null } };
	}

	/** Where the index cannot answer: the proposal the room names, where the service confirms it as this room's. */
	private async fallback(room: RoomRow, why: string): Promise<RoomProposalFinding> {
		const vendorId = vendorIdOf(room);
		const proposal = vendorId === undefined ? null : await this.lookUp(room.roomId, vendorId);
		let outcome = ' payload.proposal is null.';
		if (proposal) outcome = ` payload.proposal is the proposal the room names (vendorProposal.id), which the service confirms as this room's; it may not be the room's most recently updated one.`;
		else if (vendorId !== undefined) outcome = ` The room names the marketplace proposal ${vendorId}, but the service has no proposal of this agency under that id whose chat room is this room, so payload.proposal is null.`;
		return { proposal, proposals: null, proposalsComplete: false, notice: `${why}${outcome}` };
	}

	/** One lookup per room and vendor id (Proposal → Get), taken only if its chatRoomId is the room. */
	private async lookUp(roomId: string, vendorId: string): Promise<ProposalSummary | null> {
		const known = this.lookups[roomId];
		if (known?.vendorId === vendorId) return known.proposal;
		const record = await this.sources.fetchProposal(vendorId);
		const uid = record?.proposal?.uid;
		const confirmed = typeof uid === 'string' && uid !== '' && record?.proposal?.chatRoomId === roomId;
		const freelancer = record?.freelancer?.uid ? { uid: record.freelancer.uid, name: record.freelancer.name ?? null } : null;
		const proposal = confirmed ? { uid, status: record.proposal?.status ?? null, updatedAt: record.proposal?.updatedAt ?? null, freelancer } : null;
		delete this.lookups[roomId];
		this.lookups[roomId] = { vendorId, proposal };
		const roomIds = Object.keys(this.lookups);
		for (const dropped of roomIds.slice(0, Math.max(0, roomIds.length - MAX_PROPOSAL_LOOKUPS))) delete this.lookups[dropped];
		return proposal;
	}
}
