/**
 * The Proposal Trigger's backfill (Start From: A Date): the proposals updated from the date up to the
 * activation's watermark, oldest first. Time decides who hands a proposal on: the live polls take what
 * is updated after the watermark they started from, the backfill what lies at or below the activation's
 * (a proposal updated since moved above it, and the live polls hand it on with its change).
 *
 * The list with `updatedSince` is ordered newest first, so a pass first surveys it: each page's cursor
 * and lowest row, nothing more. Then it reads the pages again from the last one back and hands on the
 * rows from the lowest up: every row at or below `doneUpTo` is handed on or not the pass's. A page read
 * again reads on past its own end until it reaches `doneUpTo`, so rows that moved between pages while
 * the pass went on (a cursor that counts rows, a proposal that left the list) are still reached. A
 * cursor the service refuses starts the survey again; `doneUpTo` keeps what is done. At most
 * BACKFILL_REQUESTS_PER_POLL requests a poll, BACKFILL_RUN_SIZE proposals.
 */
import { httpStatusOf } from '../shared/errors';
import type { Mark } from '../shared/marks';
import { higherMark, isAfter, isAtOrBelow, isMark, timeOf } from '../shared/marks';
import { pagesOf, readListFrom } from '../shared/pagination';
import type { FetchProposalPage, ProposalPage, ProposalRecord } from '../shared/proposalSweep';
import type { BackfillLedger, BackfillPass, StartDate } from '../shared/startFrom';
import { BACKFILL_RUN_SIZE, ledgerAfterPass, loadLedger, passFor, withinPass } from '../shared/startFrom';
import type { ChangeFilters } from './classify';
import { classifyChange, passesFilters } from './classify';
import type { ProposalChange } from './pollChanges';

/** Requests the backfill may send in one poll: a quarter of the default budget of 20 a minute. */
export const BACKFILL_REQUESTS_PER_POLL = 5;

/** One page of the survey: the cursor it was read with (none: the first page) and its lowest row. */
export interface SurveyedPage {
	cursor?: string;
	lowest: Mark;
}

export interface ProposalBackfillProgress {
	/** The watermark the activation started from: the live polls own what is updated after it. */
	line: Mark;
	/** The pages surveyed, first page first. */
	pages: SurveyedPage[];
	/** Where the survey goes on; absent once it reached the end (or before it began, with no pages). */
	surveyCursor?: string;
	surveyDone: boolean;
	/** Every row of the list at or below this is handed on, or not the pass's. */
	doneUpTo?: Mark;
}

export type ProposalBackfill = BackfillLedger<ProposalBackfillProgress>;

const isSurveyedPage = (value: unknown): value is SurveyedPage =>
	isMark((value as SurveyedPage | undefined)?.lowest) && ((value as SurveyedPage).cursor === undefined || typeof (value as SurveyedPage).cursor === 'string');

function isProgress(value: unknown): value is ProposalBackfillProgress {
	const progress = value as ProposalBackfillProgress | undefined;
	return (
		isMark(progress?.line) &&
		Array.isArray(progress.pages) &&
		progress.pages.every(isSurveyedPage) &&
		(progress.surveyCursor === undefined || typeof progress.surveyCursor === 'string') &&
		typeof progress.surveyDone === 'boolean' &&
		(progress.doneUpTo === undefined || isMark(progress.doneUpTo))
	);
}

export const loadProposalBackfill = (value: unknown): ProposalBackfill | undefined => loadLedger(value, isProgress);

const updatedAtOf = (record: ProposalRecord) => {
	const updatedAt = record.proposal.updatedAt;
	return typeof updatedAt === 'string' && !Number.isNaN(timeOf(updatedAt)) ? updatedAt : undefined;
};

function lowestOf(records: ProposalRecord[]): Mark | undefined {
	let lowest: Mark | undefined;
	for (const record of records) {
		const updatedAt = updatedAtOf(record);
		if (updatedAt === undefined) continue;
		const mark = { at: updatedAt, uids: [record.proposal.uid] };
		if (lowest === undefined || timeOf(updatedAt) < timeOf(lowest.at)) lowest = mark;
		else if (timeOf(updatedAt) === timeOf(lowest.at)) lowest = higherMark(lowest, mark);
	}
	return lowest;
}

function topOf(records: ProposalRecord[]): Mark | undefined {
	let top: Mark | undefined;
	for (const record of records) {
		const updatedAt = updatedAtOf(record);
		if (updatedAt !== undefined) top = higherMark(top, { at: updatedAt, uids: [record.proposal.uid] });
	}
	return top;
}

export interface ProposalBackfillSources {
	fetchPage: FetchProposalPage;
	status?: string;
	canContinue: () => boolean;
}

export interface ProposalBackfillStep {
	backfill: ProposalBackfill | undefined;
	changes: ProposalChange[];
}

/**
 * One poll's share of the backfill for `date` (undefined: Start From is Now, the pass waits). `line` is
 * the watermark the activation started from, for a pass that begins now.
 */
export async function stepProposalBackfill(
	ledger: ProposalBackfill | undefined,
	date: StartDate | undefined,
	line: Mark,
	filters: ChangeFilters,
	sources: ProposalBackfillSources,
): Promise<ProposalBackfillStep> {
	const unchanged = { backfill: ledger, changes: [] };
	if (date === undefined) return unchanged;
	const pass = passFor(ledger, date, (): ProposalBackfillProgress => ({ line, pages: [], surveyDone: false }));
	if (pass === undefined) return unchanged;
	const progress: ProposalBackfillProgress = JSON.parse(JSON.stringify(pass.progress)) as ProposalBackfillProgress;
	let requests = 0;
	const fetch = async (pageCursor: string | undefined): Promise<ProposalPage> => {
		requests++;
		return await sources.fetchPage({ updatedSince: pass.from, ...(sources.status ? { status: sources.status } : {}), ...(pageCursor ? { pageCursor } : {}) });
	};
	const mayGoOn = () => requests < BACKFILL_REQUESTS_PER_POLL && sources.canContinue();
	const changes: ProposalChange[] = [];
	/** Whether the proposal is the pass's and not handed on yet. */
	const isDue = (record: ProposalRecord) => {
		const updatedAt = updatedAtOf(record);
		if (updatedAt === undefined || !withinPass(pass, timeOf(updatedAt))) return false;
		const uid = record.proposal.uid;
		return isAtOrBelow(progress.line, uid, updatedAt) && (progress.doneUpTo === undefined || isAfter(progress.doneUpTo, uid, updatedAt));
	};

	try {
		while (!progress.surveyDone && mayGoOn()) await surveyOnePage(progress, fetch);
		while (progress.surveyDone && progress.pages.length > 0 && changes.length < BACKFILL_RUN_SIZE && mayGoOn()) {
			const rows = await readDownTo(fetch, progress.pages[progress.pages.length - 1].cursor, progress.doneUpTo, mayGoOn);
			if (rows === 'refused') {
				progress.pages = [];
				progress.surveyDone = false;
				delete progress.surveyCursor;
				break;
			}
			if (rows === 'unfinished') break;
			// The rows read are contiguous from the page's start down to `doneUpTo`: handing on the lowest
			// first keeps everything at or below it done, whichever page a row was surveyed on.
			const due = rows.filter(isDue);
			const newest = new Map<string, ProposalRecord>();
			for (const record of due) newest.set(record.proposal.uid, record);
			const ordered = [...newest.values()].sort((a, b) => timeOf(updatedAtOf(a)!) - timeOf(updatedAtOf(b)!) || a.proposal.uid.localeCompare(b.proposal.uid));
			const run = ordered.slice(0, BACKFILL_RUN_SIZE - changes.length);
			for (const record of run) {
				progress.doneUpTo = higherMark(progress.doneUpTo, { at: updatedAtOf(record)!, uids: [record.proposal.uid] });
				changes.push({ record, ...classifyChange(record, { at: pass.from, uids: [] }) });
			}
			if (run.length === ordered.length) {
				// Every row read is done: the next page's read stops at the top of this one, due rows or not.
				const top = topOf(rows);
				if (top) progress.doneUpTo = higherMark(progress.doneUpTo, top);
				progress.pages.pop();
			}
		}
	} catch {
		// The list failed (the live part's sweep shows why): what this poll handed on is kept, the rest waits for the next poll.
	}

	const after: BackfillPass<ProposalBackfillProgress> = { ...pass, progress };
	const complete = progress.surveyDone && progress.pages.length === 0;
	const wanted = changes.filter((change) => passesFilters(change, filters)).map((change) => ({ ...change, backfilled: true, ...(pass.notice ? { backfillNotice: pass.notice } : {}) }));
	return { backfill: complete ? ledgerAfterPass(ledger, after) : { ...ledger, pass: after }, changes: wanted };
}

/** One page of the survey; a refused cursor starts it again. An empty list ends it with no page. */
async function surveyOnePage(progress: ProposalBackfillProgress, fetch: (pageCursor: string | undefined) => Promise<ProposalPage>): Promise<void> {
	const read = await readListFrom(fetch, progress.surveyCursor, async (pages, restarts) => {
		for await (const { page, next } of pages) return { records: page.data ?? [], next, restarted: restarts > 0 };
		return { records: [] as ProposalRecord[], next: undefined, restarted: restarts > 0 };
	});
	if (read.restarted) progress.pages = [];
	const cursor = read.restarted ? undefined : progress.surveyCursor;
	const lowest = lowestOf(read.records);
	if (lowest) progress.pages.push({ ...(cursor === undefined ? {} : { cursor }), lowest });
	if (read.next === undefined) {
		progress.surveyDone = true;
		delete progress.surveyCursor;
	} else progress.surveyCursor = read.next;
}

/**
 * The rows from `cursor` on, down to a row at or below `doneUpTo` (none: to the list's end); 'refused'
 * when the service no longer takes the cursor, 'unfinished' when the poll's share ended first.
 */
async function readDownTo(
	fetch: (pageCursor: string | undefined) => Promise<ProposalPage>,
	cursor: string | undefined,
	doneUpTo: Mark | undefined,
	mayGoOn: () => boolean,
): Promise<ProposalRecord[] | 'refused' | 'unfinished'> {
	const rows: ProposalRecord[] = [];
	const refusal = (error: unknown) => (cursor !== undefined && httpStatusOf(error) === 400 ? ('refused' as const) : Promise.reject(error));
	const pages = pagesOf(fetch, cursor);
	for (;;) {
		const read = await pages.next().catch(refusal);
		if (read === 'refused') return read;
		if (read.done) return rows;
		const { page, next } = read.value;
		const records = page.data ?? [];
		rows.push(...records);
		const lowest = lowestOf(records);
		if (next === undefined || (doneUpTo !== undefined && lowest !== undefined && isAtOrBelow(doneUpTo, lowest.uids[0], lowest.at))) return rows;
		if (!mayGoOn()) return 'unfinished';
	}
}
