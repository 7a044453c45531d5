/**
 * Start From, the polling triggers' setting: Now (what exists at the activation is history), or A Date
 * (the first polls also hand on what happened since that date, the backfill). What a trigger's backfill
 * has handed on is kept in its state as a ledger: the date down to which everything is handed on, and the
 * pass under way. The ledger decides what a date asks for, so the same date never hands on anything twice.
 */
import type { INodeProperties, IPollFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { toIsoWithOffset } from './dateTimes';

/** How far back a date may lie: the backfill's cost grows with it (README: its cost per 100, 1,000 and 10,000 items). */
export const MAX_BACKFILL_DAYS = 90;
const DAY_MS = 24 * 60 * 60_000;

/** The most items a poll hands on from the backfill (live items come on top, first). */
export const BACKFILL_RUN_SIZE = 100;

/** The setting's fields; `what` names the items, as in "client messages written since this date". */
export function startFromProperties(what: string): INodeProperties[] {
	return [
		{
			displayName: 'Start From',
			name: 'startFrom',
			type: 'options',
			options: [
				{ name: 'Now', value: 'now', description: `Only ${what} from the activation on` },
				{ name: 'A Date', value: 'date', description: `First ${what} since a date (at most ${MAX_BACKFILL_DAYS} days back), oldest first, then as with Now` },
			],
			default: 'now',
		},
		{
			displayName: 'Date',
			name: 'startDate',
			type: 'dateTime',
			required: true,
			default: '',
			description: `The ${what} since this date are handed on once, at most ${BACKFILL_RUN_SIZE} a poll, each with "backfilled": true. A date without a zone is read in the workflow's time zone.`,
			displayOptions: { show: { startFrom: ['date'] } },
		},
	];
}

/** The date of A Date, as an instant. */
export interface StartDate {
	iso: string;
	ms: number;
}

/** The chosen date, or undefined for Now; a date that does not parse, or one in the future, fails before any request. */
export function readStartDate(context: IPollFunctions, nowMs: number): StartDate | undefined {
	if (context.getNodeParameter('startFrom', 'now') !== 'date') return undefined;
	const value = context.getNodeParameter('startDate', '') as unknown;
	const withOffset = toIsoWithOffset(value, context.getTimezone());
	if (withOffset === undefined) {
		throw new NodeOperationError(context.getNode(), `Start From: "${String(value)}" is not a date and time`, {
			description: 'Pick a date in the Date field, or write one such as 2026-11-01T09:00 (read in the workflow\'s time zone) or 2026-11-01T09:00:00Z.',
		});
	}
	const ms = Date.parse(withOffset);
	if (ms > nowMs) {
		throw new NodeOperationError(context.getNode(), `Start From: ${withOffset} is in the future`, {
			description: 'Pick a date in the past, or Now to start from the activation.',
		});
	}
	return { iso: new Date(ms).toISOString(), ms };
}

/** A date further back than MAX_BACKFILL_DAYS fails, before any request; checked only where it would start a backfill. */
export function refuseBeyondLimit(context: IPollFunctions, date: StartDate, nowMs: number): void {
	if (date.ms >= nowMs - MAX_BACKFILL_DAYS * DAY_MS) return;
	throw new NodeOperationError(context.getNode(), `Start From: ${date.iso} is more than ${MAX_BACKFILL_DAYS} days back`, {
		description: `Pick a date within the last ${MAX_BACKFILL_DAYS} days. For older items, use the Agency Inbox node's list operations with Return All.`,
	});
}

/**
 * A trigger whose state was stored before Start From existed cannot tell the history of its activation
 * from what its live polls handed on since: a date would hand some on twice. It fails, before any request.
 */
function refuseUnknownHistory(context: IPollFunctions): never {
	throw new NodeOperationError(context.getNode(), 'Start From: this trigger was published before Start From existed, so it cannot tell its history from what it already handed on', {
		description: 'To hand on what happened since a date, add a new trigger node with the date (it starts with its own state), publish, then remove this one. Or set Start From back to Now.',
	});
}

/** A backfill under way: the items written in [from, to) (no `to`: up to the history line), and how far it is. */
export interface BackfillPass<Progress> {
	from: string;
	to?: string;
	/** Why this pass hands on less than its date asks for (the date moved; an earlier pass handed on the rest). */
	notice?: string;
	progress: Progress;
}

/** What a trigger's backfill has handed on: everything from `covered` up to the history line, and the pass under way. */
export interface BackfillLedger<Progress> {
	covered?: string;
	pass?: BackfillPass<Progress>;
}

/** The pass this poll works on for `date`; undefined when the ledger has handed on everything the date asks for. */
export function passFor<Progress>(ledger: BackfillLedger<Progress> | undefined, date: StartDate, fresh: () => Progress): BackfillPass<Progress> | undefined {
	if (ledger?.pass) {
		// A pass keeps its range to its end: what it handed on is known only as that range.
		if (ledger.pass.from === date.iso) return ledger.pass;
		return { ...ledger.pass, notice: `Start From is now ${date.iso}; the backfill since ${ledger.pass.from} that was under way goes on to its end first.` };
	}
	if (ledger?.covered === undefined) return { from: date.iso, progress: fresh() };
	if (date.ms >= Date.parse(ledger.covered)) return undefined;
	return {
		from: date.iso,
		to: ledger.covered,
		notice: `Start From moved to ${date.iso}: only what was written before ${ledger.covered} is handed on now; the rest was handed on by the backfill since then.`,
		progress: fresh(),
	};
}

/** Whether a poll with `date` would start a pass (then the date must lie within MAX_BACKFILL_DAYS). */
function startsPass(ledger: BackfillLedger<unknown> | undefined, date: StartDate): boolean {
	if (ledger?.pass) return false;
	return ledger?.covered === undefined || date.ms < Date.parse(ledger.covered);
}

/**
 * Before any request of an active trigger's poll: a date that would start a pass must lie within
 * MAX_BACKFILL_DAYS, and a stored state must know its activation's line (`knowsLine`). A pass under way
 * is not checked again: it never fails for having aged.
 */
export function checkDateOfNewPass(
	context: IPollFunctions,
	date: StartDate | undefined,
	stored: { backfill?: BackfillLedger<unknown> } | undefined,
	knowsLine: boolean,
	nowMs: number,
): void {
	if (date === undefined || !startsPass(stored?.backfill, date)) return;
	if (stored && !knowsLine) refuseUnknownHistory(context);
	refuseBeyondLimit(context, date, nowMs);
}

/** The ledger once `pass` reached its end: everything from the earlier of its date and `covered` on is handed on. */
export function ledgerAfterPass<Progress>(ledger: BackfillLedger<Progress> | undefined, pass: BackfillPass<Progress>): BackfillLedger<Progress> {
	const covered = ledger?.covered === undefined || Date.parse(pass.from) < Date.parse(ledger.covered) ? pass.from : ledger.covered;
	return { covered };
}

/** Whether an item written at `ms` lies within the pass's range below the history line (that line is checked by the trigger). */
export function withinPass(pass: Pick<BackfillPass<unknown>, 'from' | 'to'>, ms: number): boolean {
	return ms >= Date.parse(pass.from) && (pass.to === undefined || ms < Date.parse(pass.to));
}

/** A ledger read from stored state; what does not check out is dropped (then a date starts a new pass). */
export function loadLedger<Progress>(value: unknown, isProgress: (progress: unknown) => progress is Progress): BackfillLedger<Progress> | undefined {
	const stored = value as BackfillLedger<unknown> | undefined;
	if (typeof stored !== 'object' || stored === null) return undefined;
	const isDate = (date: unknown): date is string => typeof date === 'string' && !Number.isNaN(Date.parse(date));
	const pass = stored.pass;
	const passOk = pass !== undefined && isDate(pass.from) && (pass.to === undefined || isDate(pass.to)) && isProgress(pass.progress);
	return {
		...(isDate(stored.covered) ? { covered: stored.covered } : {}),
		...(passOk ? { pass: { from: pass.from, ...(pass.to ? { to: pass.to } : {}), ...(typeof pass.notice === 'string' ? { notice: pass.notice } : {}), progress: pass.progress as Progress } } : {}),
	};
}
