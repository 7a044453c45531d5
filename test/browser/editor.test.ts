/**
 * Smoke test of what a user sees in n8n's editor (the pinned n8n, headless Chromium): the three nodes
 * from the nodes panel, every resource locator list served by the sandbox, the credential test, and
 * the chat auto-reply sample run from the editor with a signed test event. Steps run in order in one
 * page; a step that breaks fails its test and the ones after it that depend on it.
 */
import type { Page } from 'playwright-core';
import { launchChromium, type Browser } from '../../scripts/browser/chromium';
import {
	APP_NAME,
	PROPOSAL_TRIGGER_NAME,
	closeCredentialDialog,
	closeLocatorList,
	closeNodeDetails,
	dismissOverlays,
	openCredentialAndTest,
	openInNodesPanel,
	openLocatorList,
	openNewWorkflow,
	openNode,
	pickInNodesPanel,
	pickLocatorItem,
	runChatSampleWithTestEvent,
	showWebhookUrls,
	signIn,
} from '../../scripts/browser/editor';
import { startEditorEnvironment, type EditorEnvironment } from '../../scripts/browser/environment';

const SETUP_TIMEOUT_MS = 10 * 60_000;

interface SentMessage {
	roomId: string;
	freelancerUid: string;
	message: string;
}
interface RequestRecord {
	method: string;
	path: string;
	status: number;
}

describe('the Agency Inbox nodes in n8n\'s editor (headless Chromium)', () => {
	let environment: EditorEnvironment | undefined;
	let browser: Browser | undefined;
	let page: Page;
	const timings: Record<string, number> = {};
	const startedAt = Date.now();
	const sandboxGet = async <T>(route: string): Promise<T> => {
		const answer = await fetch(`${environment!.sandbox.origin}/_sandbox/${route}`);
		return ((await answer.json()) as { data: T }).data;
	};
	/** The service's own API (the sandbox), as the nodes see it. */
	const serviceGet = async <T>(route: string): Promise<T> => {
		const answer = await fetch(`${environment!.sandbox.url}${route}`, { headers: { authorization: `Bearer ${environment!.sandbox.apiKey}` } });
		return ((await answer.json()) as { data: T }).data;
	};
	/** Names end with the record's ID in parentheses (see the README's resource locators). */
	const ids = (labels: string[]) => labels.map((label) => /\(([^()]+)\)$/.exec(label)?.[1]);
	/** A list of more than ten items, every one of them a record of the sandbox (its ID matches). */
	const expectRecords = (labels: string[], idPattern: RegExp) => {
		expect(labels.length).toBeGreaterThan(10);
		expect(ids(labels).filter((id) => !idPattern.test(id ?? ''))).toEqual([]);
	};

	beforeAll(async () => {
		const progress = (line: string) => process.stderr.write(`${line}\n`);
		// Started side by side; whichever started is kept (and stopped in afterAll) even if the other failed.
		const [started, launched] = await Promise.allSettled([startEditorEnvironment({ log: progress }), launchChromium()]);
		if (started.status === 'fulfilled') environment = started.value;
		if (launched.status === 'fulfilled') browser = launched.value;
		if (started.status === 'rejected') throw started.reason;
		if (launched.status === 'rejected') throw launched.reason;
		Object.assign(timings, started.value.timings);
		page = await launched.value.context.newPage();
		const signInAt = Date.now();
		await signIn(page, started.value);
		timings['sign in'] = Date.now() - signInAt;
	}, SETUP_TIMEOUT_MS);

	afterAll(async () => {
		await browser?.close();
		await environment?.stop();
		timings['total'] = Date.now() - startedAt;
		process.stderr.write(`browser test timings (ms): ${JSON.stringify(timings)}\n`);
	});

	// A step that failed leaves no dialog behind for the next one.
	beforeEach(async () => {
		if (page) await dismissOverlays(page);
	});

	const timed = (name: string, step: () => Promise<void>) => async () => {
		const stepAt = Date.now();
		await step();
		timings[name] = Date.now() - stepAt;
	};

	it('adds the webhook trigger from the app in the nodes panel and shows its test URL', timed('webhook trigger', async () => {
		await openNewWorkflow(page, environment!);
		const panel = await openInNodesPanel(page, APP_NAME);
		expect(await panel.innerText()).toMatch(/Triggers \(5\)[\s\S]*Actions \(9\)/);
		await pickInNodesPanel(page, 'On chat message sent');
		expect(await showWebhookUrls(page)).toMatch(new RegExp(`^${environment!.n8nUrl}/webhook-test/[0-9a-f-]+/webhook$`));
		await closeNodeDetails(page);
	}));

	it('runs the credential test from the node (success message, GET /v1/agency reached the sandbox)', timed('credential test', async () => {
		const before = (await sandboxGet<RequestRecord[]>('requests')).filter((request) => request.path.endsWith('/v1/agency')).length;
		await openNode(page, 'Agency Inbox Trigger');
		const { message } = await openCredentialAndTest(page);
		expect(message).toMatch(/^Connection tested successfully/);
		const after = await sandboxGet<RequestRecord[]>('requests');
		const agencyReads = after.filter((request) => request.path.endsWith('/v1/agency'));
		expect(agencyReads.length).toBeGreaterThan(before);
		expect(agencyReads[agencyReads.length - 1].status).toBe(200);
		await closeCredentialDialog(page);
		await closeNodeDetails(page);
	}));

	it('adds Message → Send; its Room list shows the sandbox\'s rooms and its Freelancer list the chosen room\'s agency members', timed('send message lists', async () => {
		await openInNodesPanel(page, APP_NAME);
		await pickInNodesPanel(page, 'Send a message to a room');
		const rooms = await openLocatorList(page, 'roomId');
		expectRecords(rooms, /^room-\d{3}$/);
		const picked = await pickLocatorItem(page);
		const roomId = ids([picked])[0]!;
		const freelancers = await openLocatorList(page, 'freelancerUid');
		const room = (await serviceGet<Array<{ roomId: string; roomUsers: Array<{ user: { id: string } }> }>>('/v1/master-inbox/rooms?pageSize=100')).find((candidate) => candidate.roomId === roomId)!;
		const members = (await serviceGet<Array<{ uid: string }>>('/v1/agency/members?pageSize=100')).map((member) => member.uid);
		const agencyParticipants = members.filter((uid) => room.roomUsers.some((participant) => participant.user.id === uid)).sort();
		// Only the room's agency members, not every member of the agency.
		expect(agencyParticipants.length).toBeLessThan(members.length);
		expect(ids(freelancers).sort()).toEqual(agencyParticipants);
		await closeLocatorList(page);
		await closeNodeDetails(page);
	}));

	it('adds Proposal → Get; its Proposal list shows the sandbox\'s proposals', timed('proposal list', async () => {
		await openInNodesPanel(page, APP_NAME);
		await pickInNodesPanel(page, 'Get a proposal');
		const proposals = await openLocatorList(page, 'proposalId');
		expectRecords(proposals, /^prop-\d{4}$/);
		await closeLocatorList(page);
		await closeNodeDetails(page);
	}));

	it('adds the proposal polling trigger from the nodes panel', timed('proposal trigger', async () => {
		const panel = await openInNodesPanel(page, PROPOSAL_TRIGGER_NAME);
		expect(await panel.innerText()).toContain('Triggers (3)');
		const ndv = await pickInNodesPanel(page, 'On new proposals');
		expect(await ndv.innerText()).toContain('Poll Times');
		await closeNodeDetails(page);
		const nodeNames = await page.getByTestId('canvas-node').allInnerTexts();
		expect(nodeNames.map((text) => text.split('\n')[0])).toEqual(
			expect.arrayContaining(['Agency Inbox Trigger', 'Send a message to a room', 'Get a proposal', 'Agency Inbox Proposal Trigger']),
		);
	}));

	it('runs the chat auto-reply sample from the editor with a signed test event', timed('auto-reply sample', async () => {
		const run = await runChatSampleWithTestEvent(page, environment!);
		expect(run.deliveryStatus).toBe(200);
		expect(run.succeededNodes).toBe(3);
		const replies = (await sandboxGet<SentMessage[]>('messages')).filter((message) => message.roomId === run.roomId);
		expect(replies).toHaveLength(1);
		expect(replies[0].message).toContain('Thanks for your message');
	}));
});
