import { DEFAULT_VARIANTS, startSandbox, type Sandbox } from '../../sandbox';
import { SandboxCore } from '../../sandbox/core';
import { RollingWindowLimiter } from '../../sandbox/rateLimit';
import { Simulator } from '../../sandbox/simulator';
import { WebhookSender } from '../../sandbox/webhooks';
import { apiClient, control, expectProblem } from './client';
import { waitFor } from '../helpers/waitFor';

async function waitForTicks(sandbox: Sandbox, ticks: number): Promise<any> {
	return await waitFor(async () => {
		const status = (await control(sandbox).get('/simulator')).body;
		return status.ticks >= ticks && status;
	}, `${ticks} ticks of the simulator`);
}

describe('sandbox activity simulator', () => {
	let sandbox: Sandbox;

	afterEach(() => sandbox?.close());

	test('started by option: client activity moves updatedAt forward and adds proposals, stories, bids and invitations', async () => {
		sandbox = await startSandbox({ requestsPerMinute: 0, simulator: { intervalMs: 10 } });
		const before = { proposals: sandbox.state.proposals.length, bids: sandbox.state.bidIntents.length, invitations: sandbox.state.invitations.length };
		await waitForTicks(sandbox, 40);
		const status = (await control(sandbox).delete('/simulator')).body;
		expect(Object.keys(status.countsByKind).sort()).toEqual(['clientMessage', 'clientReply', 'hire', 'invitationStatus', 'newInvitation', 'newProposal', 'scheduleBid', 'viewed']);
		expect(sandbox.state.proposals.length).toBeGreaterThan(before.proposals);
		expect(sandbox.state.bidIntents.length).toBeGreaterThan(before.bids);
		expect(sandbox.state.invitations.length).toBeGreaterThan(before.invitations);
		// The changes are visible through the API, newest updatedAt first.
		const recent = await apiClient(sandbox).get('/v1/agency/proposals', { updatedSince: '2026-06-02T00:00:00Z', pageSize: 100 });
		expect(recent.body.data.length).toBeGreaterThan(0);
		const stamps = recent.body.data.map((r: any) => r.proposal.updatedAt);
		expect(new Set(stamps).size).toBe(stamps.length); // strictly increasing clock: no two changes share a time
	});

	test('started and stopped via control endpoints; the sequence is deterministic from the seed', async () => {
		const sequence = async () => {
			sandbox = await startSandbox({ requestsPerMinute: 0, seed: 7 });
			const ctl = control(sandbox);
			expect((await ctl.get('/simulator')).body.running).toBe(false);
			expect((await ctl.post('/simulator', { intervalMs: 5 })).body.running).toBe(true);
			await waitForTicks(sandbox, 12);
			const stopped = (await ctl.delete('/simulator')).body;
			expect(stopped.running).toBe(false);
			const kinds = stopped.recent.slice(0, 12).map((r: any) => r.kind);
			await sandbox.close();
			return { kinds };
		};
		const first = await sequence();
		const second = await sequence();
		expect(second.kinds).toEqual(first.kinds);
		expect(new Set(first.kinds).size).toBeGreaterThan(1);
	});

	test("goes through every kind of change in its first seven ticks (under a minute at npm start's 8 s), then keeps its mix", async () => {
		sandbox = await startSandbox({ requestsPerMinute: 0, simulator: { intervalMs: 40 } });
		await waitForTicks(sandbox, 14);
		const status = (await control(sandbox).delete('/simulator')).body;
		const kinds: string[] = status.recent.map((r: any) => r.kind);
		expect(kinds).toHaveLength(status.ticks); // `recent` keeps the last 20
		expect(kinds.slice(0, 7)).toEqual(['clientMessage', 'scheduleBid', 'newProposal', 'clientReply', 'viewed', 'hire', 'newInvitation']);
		// Each names what it touched: the client message's room, the bid intent, the proposal, the invitation.
		const [message, bid, proposal] = status.recent;
		expect(sandbox.state.rooms.find((room) => room.roomId === message.subject)?.lastStory?.message).toEqual(expect.any(String));
		expect(sandbox.state.bidIntents.find((intent) => intent.id === bid.subject)?.status).toBe('scheduled');
		expect(sandbox.state.proposals.slice(300).map((record) => record.proposal.uid)).toContain(proposal.subject); // after the 300 seeded
		expect(status.recent[6].subject).toBe('inv-046'); // after the 45 seeded
		expect(sandbox.state.invitations.map((invitation) => invitation.invite.uid)).toContain('inv-046');
		// Afterwards the weighted mix: replies and views are commoner than hires and bids.
		expect(new Set(kinds.slice(7)).size).toBeGreaterThan(2);
	});

	test('its mix has two client messages in one room between two polls (its recent changes count them), and answers to pending invitations', () => {
		const seed = 20_240_601;
		const core = new SandboxCore({ seed, proposals: 300, rooms: 60, pageSize: 20, maxPageSize: 100, variants: DEFAULT_VARIANTS }, new RollingWindowLimiter(0), new WebhookSender('unused', 1));
		const simulator = new Simulator(core, seed);
		const storyCount = () => Object.values(core.state.stories).reduce((sum, stories) => sum + stories.length, 0);
		const invitation = (uid: string) => core.state.invitations.find((candidate) => candidate.invite.uid === uid)!;
		const messagesPerClientTick = new Set<number>();
		let answered = 0;
		for (let tick = 0; tick < 200; tick++) {
			const storiesBefore = storyCount();
			const pendingBefore = core.state.invitations.filter((candidate) => candidate.invite.status === 'PENDING').map((candidate) => candidate.invite.uid);
			const kind = simulator.tick();
			const { subject, count } = simulator.recent[simulator.recent.length - 1];
			if (kind === 'clientMessage') {
				messagesPerClientTick.add(storyCount() - storiesBefore);
				expect(count).toBe(storyCount() - storiesBefore);
			}
			if (kind === 'invitationStatus') {
				answered++;
				expect(pendingBefore).toContain(subject);
				expect(['ACCEPTED', 'DECLINED']).toContain(invitation(subject).invite.status);
			}
		}
		expect([...messagesPerClientTick].sort()).toEqual([1, 2]);
		expect(answered).toBeGreaterThan(3);
	});

	test('startSimulator() starts it on a running sandbox', async () => {
		sandbox = await startSandbox({ requestsPerMinute: 0 });
		expect((await control(sandbox).get('/simulator')).body).toMatchObject({ running: false, ticks: 0 });
		sandbox.startSimulator(10);
		expect((await waitForTicks(sandbox, 2)).running).toBe(true);
	});

	test('invalid interval is a 400', async () => {
		sandbox = await startSandbox({ requestsPerMinute: 0 });
		expectProblem(await control(sandbox).post('/simulator', { intervalMs: -1 }), 400);
	});
});
