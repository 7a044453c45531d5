import type { IDataObject } from 'n8n-workflow';

import { classifyChange, classifySample, passesFilters } from '../../../nodes/AgencyInboxProposalTrigger/classify';
import type { PollOptions } from '../../../nodes/AgencyInboxProposalTrigger/pollChanges';
import { findSampleChange, pollChanges } from '../../../nodes/AgencyInboxProposalTrigger/pollChanges';
import { sweepProposals } from '../../../nodes/shared/proposalSweep';
import type { ProposalTriggerState } from '../../../nodes/AgencyInboxProposalTrigger/state';
import { bootstrapProposalState, loadProposalState, mergeWithStored, saveProposalState } from '../../../nodes/AgencyInboxProposalTrigger/state';
import { FakeProposalService } from './fakeService';

const everything: PollOptions = { triggerOn: 'both', resultEvents: [], canContinue: () => true };

function historicService(count: number, pageSize = 2) {
	const service = new FakeProposalService(pageSize);
	for (let index = 1; index <= count; index++) service.create(`prop-${String(index).padStart(4, '0')}`);
	return service;
}

async function poll(service: FakeProposalService, state: ProposalTriggerState, options: PollOptions = everything) {
	const outcome = await pollChanges(state, service.fetchPage, options);
	return { ...outcome, summary: outcome.changes.map((change) => `${change.trigger}:${change.record.proposal.uid}:${change.resultEvent}`) };
}

describe('pollChanges against an in-memory service', () => {
	it('emits a new proposal and an update once, then nothing', async () => {
		const service = historicService(5);
		let state = bootstrapProposalState(new Date(service.now()));
		service.create('prop-new');
		service.addResult('prop-0002', 'CLIENT_REPLIED');
		const first = await poll(service, state);
		expect(first.summary).toEqual(['new:prop-new:null', 'updated:prop-0002:CLIENT_REPLIED']);
		state = first.state;
		const second = await poll(service, state);
		expect(second.summary).toEqual([]);
		expect(second.requests).toBe(1);
		expect(second.state).toEqual(state);
	});

	it('catches a proposal updated between two pages of a sweep at the next poll', async () => {
		const service = historicService(10);
		let state = bootstrapProposalState(new Date(service.now()));
		for (const uid of ['prop-0001', 'prop-0002', 'prop-0003', 'prop-0004', 'prop-0005']) service.touch(uid);
		service.beforePage = (index) => {
			// prop-0001 is the oldest change, on the last page: it moves above the cursor (rule 4).
			if (index === 1) service.addResult('prop-0001', 'HIRED');
		};
		const first = await poll(service, state);
		expect(first.summary).toEqual(['updated:prop-0002:null', 'updated:prop-0003:null', 'updated:prop-0004:null', 'updated:prop-0005:null']);
		service.beforePage = undefined;
		state = first.state;
		const second = await poll(service, state);
		expect(second.summary).toEqual(['updated:prop-0001:HIRED']);
		expect((await poll(service, second.state)).summary).toEqual([]);
	});

	it('drops boundary duplicates on uid plus updatedAt and keeps a second proposal at the same time', async () => {
		const service = historicService(3);
		let state = bootstrapProposalState(new Date(service.now()));
		const at = service.now();
		service.addResult('prop-0001', 'VIEWED_BY_CLIENT', at);
		const first = await poll(service, state);
		expect(first.summary).toEqual(['updated:prop-0001:VIEWED_BY_CLIENT']);
		state = first.state;
		expect(state.watermark).toEqual({ at, uids: ['prop-0001'] });
		service.addResult('prop-0002', 'CLIENT_REPLIED', at);
		const second = await poll(service, state);
		expect(second.summary).toEqual(['updated:prop-0002:CLIENT_REPLIED']);
		expect(second.state.watermark).toEqual({ at, uids: ['prop-0001', 'prop-0002'] });
		expect((await poll(service, second.state)).summary).toEqual([]);
	});

	it('restarts without pageCursor after a stale-cursor 400', async () => {
		const service = historicService(6);
		const state = bootstrapProposalState(new Date(service.now()));
		for (const uid of ['prop-0001', 'prop-0002', 'prop-0003']) service.touch(uid);
		const stale = JSON.stringify({ ordering: 'createdAt', at: '', uid: '' });
		const sweep = await sweepProposals(service.fetchPage, { updatedSince: state.watermark.at, startCursor: stale, canContinue: () => true });
		expect(sweep.restarted).toBe(true);
		expect(sweep.records.map((record) => record.proposal.uid)).toEqual(['prop-0003', 'prop-0002', 'prop-0001']);
		expect(service.requests[1].pageCursor).toBeUndefined();
	});

	it('does not restart forever, and a 400 without a cursor is an error', async () => {
		const badRequest = Object.assign(new Error('bad'), { httpCode: '400' });
		const fetchPage = jest.fn().mockRejectedValue(badRequest);
		await expect(sweepProposals(fetchPage, { updatedSince: 'x', canContinue: () => true })).rejects.toBe(badRequest);
		expect(fetchPage).toHaveBeenCalledTimes(1);
		await expect(sweepProposals(fetchPage, { updatedSince: 'x', startCursor: 'c', canContinue: () => true })).rejects.toBe(badRequest);
		// A cursor, then the top, then nothing more: a refused restart is a real error.
		expect(fetchPage).toHaveBeenCalledTimes(3);
		const notFound = Object.assign(new Error('gone'), { httpCode: '404' });
		const failing = jest.fn().mockRejectedValue(notFound);
		await expect(sweepProposals(failing, { updatedSince: 'x', startCursor: 'c', canContinue: () => true })).rejects.toBe(notFound);
		expect(failing).toHaveBeenCalledTimes(1);
	});

	it('resumes a sweep that ran out of poll time without losing or repeating rows', async () => {
		const service = historicService(12);
		let state = bootstrapProposalState(new Date(service.now()));
		const changed = ['prop-0001', 'prop-0002', 'prop-0003', 'prop-0004', 'prop-0005', 'prop-0006', 'prop-0007'];
		for (const uid of changed) service.touch(uid);
		const onePage: PollOptions = { ...everything, canContinue: () => false };
		const emitted: string[] = [];
		for (let pollIndex = 0; pollIndex < 6; pollIndex++) {
			if (pollIndex === 2) service.addResult('prop-0001', 'HIRED'); // not yet reached: moves above the cursor
			if (pollIndex === 2) service.addResult('prop-0007', 'CLIENT_REPLIED'); // already emitted: changes again
			const outcome = await poll(service, state, onePage);
			emitted.push(...outcome.summary);
			state = outcome.state;
		}
		expect(state.pending).toBeUndefined();
		expect(emitted.filter((entry) => entry.endsWith(':null')).sort()).toEqual(
			['prop-0002', 'prop-0003', 'prop-0004', 'prop-0005', 'prop-0006', 'prop-0007'].map((uid) => `updated:${uid}:null`),
		);
		expect(emitted.filter((entry) => !entry.endsWith(':null')).sort()).toEqual([
			'updated:prop-0001:HIRED',
			'updated:prop-0007:CLIENT_REPLIED',
		]);
	});

	it('resumes after a stale-cursor 400 on the stored cursor without repeating what it emitted', async () => {
		const service = historicService(10);
		let state = bootstrapProposalState(new Date(service.now()));
		for (const uid of ['prop-0001', 'prop-0002', 'prop-0003', 'prop-0004', 'prop-0005']) service.touch(uid);
		const first = await poll(service, state, { ...everything, canContinue: () => false });
		expect(first.summary).toEqual(['updated:prop-0004:null', 'updated:prop-0005:null']);
		state = { ...first.state, pending: { ...first.state.pending!, cursor: JSON.stringify({ ordering: 'createdAt' }) } };
		const second = await poll(service, state);
		expect(second.summary).toEqual(['updated:prop-0001:null', 'updated:prop-0002:null', 'updated:prop-0003:null']);
		expect(second.state.pending).toBeUndefined();
		expect(second.state.watermark.uids).toEqual(['prop-0005']);
		expect((await poll(service, second.state)).summary).toEqual([]);
	});

	it('keeps the state small after thousands of updates', async () => {
		const service = historicService(50, 100);
		let state = bootstrapProposalState(new Date(service.now()));
		for (let round = 0; round < 40; round++) {
			for (let index = 0; index < 100; index++) service.addResult(`prop-${String((index % 50) + 1).padStart(4, '0')}`, 'VIEWED_BY_CLIENT');
			state = (await poll(service, state)).state;
		}
		expect(state.watermark.uids).toHaveLength(1);
		expect(JSON.stringify(state).length).toBeLessThan(200);
	});
});

describe('classification and filters', () => {
	const previous = { at: '2026-01-01T00:00:10.000Z', uids: ['p-at'] };
	const record = (uid: string, createdAt: string, results: Array<{ timeStamp: string; type: string }> = []) => ({
		proposal: { uid, createdAt, updatedAt: createdAt, results },
	});

	it('is new when created after the previous watermark, even with a reply already', () => {
		const replied = record('p1', '2026-01-01T00:00:11.000Z', [{ timeStamp: '2026-01-01T00:00:12.000Z', type: 'CLIENT_REPLIED' }]);
		expect(classifyChange(replied, previous)).toEqual({ trigger: 'new', resultEvent: 'CLIENT_REPLIED' });
	});

	it('at the watermark, is new unless it was taken there', () => {
		expect(classifyChange(record('p2', previous.at), previous).trigger).toBe('new');
		expect(classifyChange(record('p-at', previous.at), previous).trigger).toBe('updated');
	});

	it('an update names only a result event that arrived since the previous watermark', () => {
		const hiredLongAgo = record('p3', '2025-01-01T00:00:00.000Z', [
			{ timeStamp: '2025-02-01T00:00:00.000Z', type: 'HIRED' },
		]);
		expect(classifyChange(hiredLongAgo, previous)).toEqual({ trigger: 'updated', resultEvent: null });
		const viewedThenReplied = record('p4', '2025-01-01T00:00:00.000Z', [
			{ timeStamp: '2026-01-01T00:00:20.000Z', type: 'VIEWED_BY_CLIENT' },
			{ timeStamp: '2026-01-01T00:00:30.000Z', type: 'CLIENT_REPLIED' },
		]);
		expect(classifyChange(viewedThenReplied, previous).resultEvent).toBe('CLIENT_REPLIED');
		expect(classifySample(hiredLongAgo)).toEqual({ trigger: 'updated', resultEvent: 'HIRED' });
		expect(classifySample(record('p5', previous.at))).toEqual({ trigger: 'new', resultEvent: null });
	});

	it('applies Trigger On and the result event filter (updates only)', () => {
		const created = { trigger: 'new' as const, resultEvent: null };
		const hired = { trigger: 'updated' as const, resultEvent: 'HIRED' };
		const statusChange = { trigger: 'updated' as const, resultEvent: null };
		expect(passesFilters(created, { triggerOn: 'updated', resultEvents: [] })).toBe(false);
		expect(passesFilters(hired, { triggerOn: 'new', resultEvents: [] })).toBe(false);
		expect(passesFilters(statusChange, { triggerOn: 'both', resultEvents: [] })).toBe(true);
		expect(passesFilters(statusChange, { triggerOn: 'both', resultEvents: ['HIRED'] })).toBe(false);
		expect(passesFilters(hired, { triggerOn: 'updated', resultEvents: ['HIRED'] })).toBe(true);
		expect(passesFilters(created, { triggerOn: 'both', resultEvents: ['HIRED'] })).toBe(true);
	});

	it('Fetch Test Event takes the most recently updated matching proposal', async () => {
		const service = historicService(6);
		service.addResult('prop-0002', 'HIRED');
		service.addResult('prop-0004', 'VIEWED_BY_CLIENT');
		const sample = await findSampleChange(service.fetchPage, { triggerOn: 'updated', resultEvents: ['HIRED'] });
		expect(sample?.record.proposal.uid).toBe('prop-0002');
		expect((await findSampleChange(service.fetchPage, { triggerOn: 'new', resultEvents: [] }))?.record.proposal.uid).toBe('prop-0006');
	});

	it('stores and reloads its state in static data', () => {
		const staticData = {};
		const state = { watermark: { at: '2026-01-01T00:00:00.000Z', uids: ['a'] }, pending: { cursor: 'c' } };
		saveProposalState(staticData, state);
		expect(loadProposalState(staticData)).toEqual(state);
		saveProposalState(staticData, { watermark: state.watermark });
		expect(loadProposalState(staticData)).toEqual({ watermark: state.watermark });
		expect(loadProposalState({ watermark: { at: 'nonsense', uids: [] } })).toBeUndefined();
	});
});

describe('the stored watermark never moves backwards', () => {
	const at = (iso: string, uids: string[] = []) => ({ at: iso, uids });

	it('keeps a later stored watermark over an older poll result, and unites uids at the same time', () => {
		const later = { watermark: at('2026-11-23T10:00:00.000Z', ['prop-2']) };
		const older = { watermark: at('2026-11-23T09:00:00.000Z', ['prop-1']) };
		expect(mergeWithStored(later, older)).toEqual(later);
		expect(mergeWithStored(older, later)).toEqual(later);
		const sameTime = { watermark: at('2026-11-23T10:00:00.000Z', ['prop-3']), pending: { cursor: 'c1' } };
		expect(mergeWithStored(later, sameTime)).toEqual({ watermark: at('2026-11-23T10:00:00.000Z', ['prop-2', 'prop-3']), pending: { cursor: 'c1' } });
		expect(mergeWithStored(undefined, older)).toEqual(older);
	});

	it('saveProposalState reads what is stored at the moment it writes', () => {
		const staticData: IDataObject = {};
		saveProposalState(staticData, { watermark: at('2026-11-23T10:00:00.000Z', ['prop-2']) });
		saveProposalState(staticData, { watermark: at('2026-11-23T09:00:00.000Z', ['prop-1']), pending: { cursor: 'stale' } });
		expect(staticData).toEqual({ watermark: at('2026-11-23T10:00:00.000Z', ['prop-2']) });
	});
});
