/**
 * The Message Trigger's `payload.proposal` and `room.proposals` from the relation the spec states (the
 * proposal's `chatRoomId`), through n8n-core's engine against the sandbox over HTTP, under each reading
 * of a room's `vendorProposal.id` and of the unnamed page size: the activation's full pass over polls,
 * the item while it is not read through, a room with several proposals, proposals updated, created and
 * re-linked while the trigger runs, a stale cursor, and what each poll costs.
 */
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { AgencyInboxMessageTrigger } from '../../../nodes/AgencyInboxMessageTrigger/AgencyInboxMessageTrigger.node';
import { MAX_PROPOSALS_KEPT } from '../../../nodes/AgencyInboxMessageTrigger/proposalIndex';
import { MAX_PAGES_PER_POLL } from '../../../nodes/AgencyInboxMessageTrigger/roomProposal';
import { resetProcessMemory } from '../../../nodes/shared/processMemory';
import { SINGLE_READINGS, startSandbox } from '../../../sandbox';
import type { RequestLogEntry } from '../../../sandbox/core';
import { TriggerWorkflow } from '../../helpers/engine';
import { sandboxControl } from '../../helpers/sandboxControl';
import { messageState, proposalsOfRoom, proposalsRead, untilProposalsRead } from './roomProposalsHelpers';

type Sandbox = Awaited<ReturnType<typeof startSandbox>>;

/** Pages of 5 rows: the 300 seeded proposals take 60 pages, so the full pass spans polls. */
const PAGE_SIZE = 5;

const READINGS = SINGLE_READINGS.filter(({ label }) => label === 'default' || label.startsWith('vendorProposalId=') || label.startsWith('unnamedQueryParameters='));

describe.each(READINGS.map(({ label, variants }) => [label, variants] as const))("the room's proposals in the Message Trigger's items, reading %s", (_label, variants) => {
	let sandbox: Sandbox;

	beforeAll(async () => {
		sandbox = await startSandbox({ requestsPerMinute: 0, pageSize: PAGE_SIZE, maxPageSize: PAGE_SIZE, variants });
	});

	afterAll(async () => {
		await sandbox.close();
	});

	beforeEach(async () => {
		resetProcessMemory();
		await control('POST', 'reset');
		await control('DELETE', 'requests');
	});

	const control = (method: string, path: string, body?: unknown) => sandboxControl<IDataObject>(sandbox.origin, method, path, body);
	const change = async (body: IDataObject) => (await control('POST', 'changes', body)).data as IDataObject & { proposal: { uid: string; updatedAt: string } };
	const clientMessage = (roomId: string, text: string) => change({ kind: 'clientMessage', roomId, text });
	const requestsMade = async () => ((await control('GET', 'requests')) as unknown as { data: RequestLogEntry[] }).data;
	const proposalListRequests = async () => (await requestsMade()).filter((request) => request.path.endsWith('/v1/agency/proposals'));

	const trigger = (staticData?: IDataObject) =>
		new TriggerWorkflow(
			{
				type: 'agencyInboxMessageTrigger',
				nodeType: new AgencyInboxMessageTrigger(),
				parameters: {},
				credentials: { agencyInboxApi: { apiKey: sandbox.apiKey, baseUrl: sandbox.url, requestsPerMinute: 10_000 } },
			},
			staticData,
		);

	const itemsOf = (result: INodeExecutionData[][] | null) => (result?.[0] ?? []).map(({ json }) => json as IDataObject & { room: IDataObject; payload: IDataObject });

	/** The item's proposal part, against the sandbox's truth now. */
	function expectProposalsOf(item: IDataObject & { room: IDataObject; payload: IDataObject }, roomId: string) {
		const proposals = proposalsOfRoom(sandbox.state, roomId);
		expect({ payload: item.payload.proposal, proposalUid: item.room.proposalUid, proposals: item.room.proposals, complete: item.room.proposalsComplete, notice: item.notice }).toEqual({
			payload: { uid: proposals[0].uid },
			proposalUid: proposals[0].uid,
			proposals: proposals.slice(0, 10),
			complete: proposals.length <= 10,
			notice: undefined,
		});
		expect(item.room.replyAs).toEqual(proposals[0].freelancer);
	}

	it('reads the proposal list from the first poll after the activation on, at most 10 pages a poll, then each poll costs what it did', async () => {
		const messages = trigger();
		expect(await messages.poll()).toBeNull();
		// The activation reads rooms only: n8n awaits it before it reports the workflow published.
		expect(await proposalListRequests()).toEqual([]);
		expect(await messages.poll()).toBeNull();
		const pass = (await proposalListRequests()).filter((request) => request.query.updatedSince === undefined);
		// Under "rejected" the page size is refused once and the request sent again without it.
		expect(pass.filter((request) => request.status === 200)).toHaveLength(MAX_PAGES_PER_POLL);
		expect(pass.filter((request) => request.status === 400)).toHaveLength(variants.unnamedQueryParameters === 'rejected' ? 1 : 0);
		expect(proposalsRead(messages)).toBe(false);
		const polls = await untilProposalsRead(messages);
		const pages = Math.ceil(sandbox.state.proposals.length / PAGE_SIZE);
		expect(polls).toBe(Math.ceil(pages / MAX_PAGES_PER_POLL) - 1);
		const passPages = (await proposalListRequests()).filter((request) => request.query.updatedSince === undefined && request.status === 200);
		expect(passPages).toHaveLength(pages);

		// Read through: a poll when nobody wrote costs one request, a poll after a client message one more than before (the changes since the last sweep).
		await control('DELETE', 'requests');
		expect(await messages.poll()).toBeNull();
		expect(await requestsMade()).toHaveLength(1);
		await clientMessage('room-004', 'Any news?');
		await control('DELETE', 'requests');
		expect(itemsOf(await messages.poll())).toHaveLength(1);
		const answered = (await requestsMade()).filter((request) => request.status === 200);
		const count = (ending: string) => answered.filter((request) => request.path.endsWith(ending)).length;
		expect({ rooms: count('/rooms'), stories: count('/stories'), changes: count('/proposals'), lookups: answered.filter((request) => request.path.includes('/proposals/')).length }).toEqual({
			rooms: 1,
			stories: 1,
			changes: 1,
			lookups: 0,
		});
	});

	it("while the list is not read through, a client message goes out with the proposal the room names where the service confirms it, else it waits for the list; then the room's most recent", async () => {
		const messages = trigger();
		expect(await messages.poll()).toBeNull();
		const room = sandbox.state.rooms.find((candidate) => proposalsOfRoom(sandbox.state, candidate.roomId).length > 1)!;
		await clientMessage(room.roomId, 'Are you there?');
		const first = itemsOf(await messages.poll());
		const named = sandbox.state.proposals.find((record) => record.proposal.uid === room.vendorProposal!.id)!;
		if (variants.vendorProposalId === 'proposalUid') {
			expect(first).toHaveLength(1);
			expect(first[0].room.proposals).toBeNull();
			expect(first[0].notice).toMatch(/still reading the agency's proposals/);
			expect(first[0].payload.proposal).toEqual({ uid: named.proposal.uid });
			expect(first[0].room.replyAs).toEqual({ uid: named.freelancer.uid, name: named.freelancer.name });
			await untilProposalsRead(messages);
		} else {
			// The room's id names no proposal of this agency: the message waits until the list is read
			// through, and the changes since its start (the poll after the one that read its last page).
			expect(first).toEqual([]);
			let later: ReturnType<typeof itemsOf> = [];
			let pollsSinceRead = 0;
			for (let polls = 0; later.length === 0; polls++) {
				if (polls > 200) throw new Error('the proposal list was not read through in 200 polls');
				if (proposalsRead(messages)) pollsSinceRead++;
				if (pollsSinceRead > 1) throw new Error('the message was not emitted by the poll after the list was read through');
				later = itemsOf(await messages.poll());
			}
			expect(proposalsRead(messages)).toBe(true);
			expect(later.map((item) => (item.message as IDataObject).text)).toEqual(['Are you there?']);
			expectProposalsOf(later[0], room.roomId);
			expect(await messages.poll()).toBeNull();
		}
		await clientMessage(room.roomId, 'Hello again');
		const [again] = itemsOf(await messages.poll());
		expectProposalsOf(again, room.roomId);
		expect((again.room.proposals as unknown[]).length).toBeGreaterThan(1);
	});

	it('a proposal updated, one created for an existing room and one re-linked to another room while the trigger runs, also while it reads the list through', async () => {
		const messages = trigger();
		expect(await messages.poll()).toBeNull();
		const [a, b, c, d] = ['room-011', 'room-012', 'room-013', 'room-014'];
		// During the full pass: what it read already changes (rule 5: the sweeps from the clock noted before it catch up).
		const older = proposalsOfRoom(sandbox.state, a).at(-1)!;
		await change({ kind: 'status', proposalUid: older.uid, status: 'archived' });
		const created = await change({ kind: 'newProposal', roomId: b });
		const moving = proposalsOfRoom(sandbox.state, c)[0];
		await change({ kind: 'relinkProposal', proposalUid: moving.uid, roomId: d });
		await untilProposalsRead(messages);
		for (const roomId of [a, b, c, d]) await clientMessage(roomId, `In ${roomId}`);
		const items = itemsOf(await messages.poll());
		expect(items.map((item) => (item.payload.proposal as { uid: string }).uid)).toEqual([older.uid, created.proposal.uid, proposalsOfRoom(sandbox.state, c)[0].uid, moving.uid]);
		for (const [index, roomId] of [a, b, c, d].entries()) expectProposalsOf(items[index], roomId);

		// Read through: the same changes again.
		const second = proposalsOfRoom(sandbox.state, b)[1];
		await change({ kind: 'clientReply', proposalUid: second.uid }); // also a client message in b
		const back = await change({ kind: 'relinkProposal', proposalUid: moving.uid, roomId: c });
		const fresh = await change({ kind: 'newProposal', roomId: a });
		await clientMessage(a, 'Again in a');
		await clientMessage(d, 'Again in d');
		const again = itemsOf(await messages.poll());
		expect(again.map((item) => [(item.payload as { chat: { id: string } }).chat.id, (item.payload.proposal as { uid: string } | null)?.uid])).toEqual([
			[b, second.uid],
			[a, fresh.proposal.uid],
			[d, proposalsOfRoom(sandbox.state, d)[0]?.uid],
		]);
		for (const item of again) expectProposalsOf(item, (item.payload as { chat: { id: string } }).chat.id);
		expect(back.proposal.uid).toBe(moving.uid);
		expect(proposalsOfRoom(sandbox.state, c)[0].uid).toBe(moving.uid);
	});

	it('a room whose proposals all moved away has none, and says so where it names one', async () => {
		const messages = trigger();
		await untilProposalsRead(messages);
		const roomId = 'room-020';
		for (const { uid } of proposalsOfRoom(sandbox.state, roomId)) await change({ kind: 'relinkProposal', proposalUid: uid, roomId: null });
		await clientMessage(roomId, 'Nobody here?');
		const [item] = itemsOf(await messages.poll());
		expect([item.payload.proposal, item.room.proposals, item.room.proposalsComplete]).toEqual([null, [], true]);
		expect(item.notice).toMatch(/no proposal of this agency has this room as its chat room/);
	});

	it('a stale cursor (400) starts the full pass over, and it still reads every proposal', async () => {
		const first = trigger();
		expect(await first.poll()).toBeNull();
		expect(await first.poll()).toBeNull();
		// A cursor of the updatedSince ordering stands for one the service no longer accepts for the pass.
		const answer = await fetch(`${sandbox.url}/v1/agency/proposals?updatedSince=2000-01-01T00:00:00Z`, { headers: { authorization: `Bearer ${sandbox.apiKey}` } });
		const staleCursor = ((await answer.json()) as { meta: { nextCursor: string } }).meta.nextCursor;
		const staticData = JSON.parse(JSON.stringify(first.workflow.staticData)) as IDataObject;
		const stored = (staticData['node:Node Under Test'] as { messages: { proposals: { index: { pass: { cursor: string } } } } }).messages;
		stored.proposals.index.pass.cursor = staleCursor;
		const restarted = trigger(staticData);
		await control('DELETE', 'requests');
		await untilProposalsRead(restarted);
		const pass = (await proposalListRequests()).filter((request) => request.query.updatedSince === undefined);
		expect(pass[0]).toMatchObject({ status: 400, query: { pageCursor: staleCursor } });
		expect(pass.filter((request) => request.status === 200 && request.query.pageCursor === undefined)).toHaveLength(1);
		const rooms = (messageState(restarted)!.proposals as { index: { rooms: Record<string, unknown> } }).index.rooms;
		const linked = new Set(sandbox.state.proposals.map((record) => record.proposal.chatRoomId).filter((roomId) => roomId !== null));
		expect(Object.keys(rooms).sort()).toEqual([...linked].sort());
		await clientMessage('room-030', 'After the restart');
		expectProposalsOf(itemsOf(await restarted.poll())[0], 'room-030');
	});
});

describe.each(SINGLE_READINGS.filter(({ label }) => label === 'default' || label === 'vendorProposalId=marketplaceId').map(({ label, variants }) => [label, variants] as const))(
	'more proposals than the Message Trigger keeps, reading %s',
	(_label, variants) => {
		let sandbox: Sandbox;

		beforeAll(async () => {
			// A room per proposal: past MAX_PROPOSALS_KEPT the rooms whose proposals changed longest ago are dropped.
			sandbox = await startSandbox({ requestsPerMinute: 0, proposals: MAX_PROPOSALS_KEPT + 100, rooms: MAX_PROPOSALS_KEPT + 100, variants });
			resetProcessMemory();
		});

		afterAll(async () => {
			await sandbox.close();
		});

		it('a message in a room it dropped gets the lookup of vendorProposal.id (confirmed, else none) and a notice, each time; a kept room its proposal', async () => {
			const messages = new TriggerWorkflow({
				type: 'agencyInboxMessageTrigger',
				nodeType: new AgencyInboxMessageTrigger(),
				parameters: {},
				credentials: { agencyInboxApi: { apiKey: sandbox.apiKey, baseUrl: sandbox.url, requestsPerMinute: 10_000 } },
			});
			expect(await messages.poll()).toBeNull();
			await untilProposalsRead(messages);
			const newestOf = (roomId: string) => proposalsOfRoom(sandbox.state, roomId)[0]?.updatedAt ?? '';
			const byNewest = sandbox.state.rooms.map((room) => room.roomId).sort((a, b) => (newestOf(a) < newestOf(b) ? 1 : -1));
			const [kept, dropped] = [byNewest[0], byNewest[byNewest.length - 1]];
			const lookupsOf = async () => ((await sandboxControl<{ data: RequestLogEntry[] }>(sandbox.origin, 'GET', 'requests')).data).filter((request) => request.path.includes('/v1/agency/proposals/')).length;
			for (let round = 1; round <= 2; round++) {
				await sandboxControl(sandbox.origin, 'POST', 'changes', { kind: 'clientMessage', roomId: kept, text: 'kept' });
				await sandboxControl(sandbox.origin, 'POST', 'changes', { kind: 'clientMessage', roomId: dropped, text: 'dropped' });
				const items = (await messages.poll())![0].map(({ json }) => json as IDataObject & { room: IDataObject; payload: IDataObject });
				const [inKept, inDropped] = [kept, dropped].map((roomId) => items.find((item) => (item.payload as { chat: { id: string } }).chat.id === roomId)!);
				expect(inKept.payload.proposal).toEqual({ uid: proposalsOfRoom(sandbox.state, kept)[0].uid });
				expect(inKept.notice).toBeUndefined();
				const named = proposalsOfRoom(sandbox.state, dropped)[0];
				expect(inDropped.payload.proposal).toEqual(variants.vendorProposalId === 'proposalUid' ? { uid: named.uid } : null);
				expect(inDropped.room.proposals).toBeNull();
				expect(inDropped.notice).toMatch(new RegExp(`keeps at most ${MAX_PROPOSALS_KEPT} proposals`));
				expect(await lookupsOf()).toBe(round);
			}
			const state = JSON.stringify(messageState(messages));
			expect(state.length).toBeLessThan(250_000);
		});
	},
);
