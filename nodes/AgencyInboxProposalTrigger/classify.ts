import { latestResultEvent } from '../shared/simplifyProposal';
import type { ProposalRecord } from '../shared/proposalSweep';
import type { Mark } from '../shared/marks';
import { isAfter } from '../shared/marks';

export type TriggerOn = 'new' | 'updated' | 'both';

export interface ChangeReason {
	trigger: 'new' | 'updated';
	/** The newest result event that arrived since the previous poll, or null (e.g. a status change). */
	resultEvent: string | null;
}

export interface ChangeFilters {
	triggerOn: TriggerOn;
	/** Updated proposals only fire for these newest result events; empty = every update. */
	resultEvents: string[];
}

/**
 * New or updated, judged against the previous watermark (everything earlier sweeps took):
 * - new: created after it (or exactly at it and not among the uids taken there). Such a proposal
 *   cannot have been emitted before, because every proposal carries updatedAt >= createdAt and earlier
 *   sweeps took only rows up to the watermark. This holds even if a client already replied to it.
 * - updated: created before, so this row is a change to a proposal that existed at the previous poll
 *   (or at activation, for history).
 * Both carry the newest result event that arrived after the previous watermark, by the same rule.
 */
export function classifyChange(record: ProposalRecord, previous: Mark): ChangeReason {
	const { uid, createdAt, results = [] } = record.proposal;
	const recentResults = results.filter((event) => isAfter(previous, uid, event.timeStamp));
	const resultEvent = latestResultEvent(recentResults)?.type ?? null;
	return { trigger: isAfter(previous, uid, createdAt) ? 'new' : 'updated', resultEvent };
}

/**
 * For Fetch Test Event, which has no previous poll: a proposal without result events stands for a
 * new one, otherwise it stands for an update with its newest result event.
 */
export function classifySample(record: ProposalRecord): ChangeReason {
	const event = latestResultEvent(record.proposal.results);
	return event ? { trigger: 'updated', resultEvent: event.type } : { trigger: 'new', resultEvent: null };
}

export function passesFilters(reason: ChangeReason, filters: ChangeFilters): boolean {
	if (filters.triggerOn !== 'both' && filters.triggerOn !== reason.trigger) return false;
	if (reason.trigger === 'new' || filters.resultEvents.length === 0) return true;
	return reason.resultEvent !== null && filters.resultEvents.includes(reason.resultEvent);
}
