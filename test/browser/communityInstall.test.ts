/**
 * The README's first instruction, as a user follows it, in the pinned n8n driven in headless
 * Chromium: Settings → Community Nodes → Install, `n8n-nodes-agency-inbox`, from a registry. The
 * registry is a stand-in started here (test/browser/npmRegistry.ts: n8n's npm reaches it as
 * registry.npmjs.org through an HTTPS proxy), holding first the last release, 0.1.0 (rebuilt from its
 * commit), then also the build under test as the next version (0.1.1-next.0 while package.json says
 * 0.1.0). Under 0.1.0 the user makes a credential and publishes the webhook and Proposal Trigger
 * workflows saved with 0.1.0 (test/compat/0.1.0/), each runs once; then updates from the same screen.
 * After the update: the nodes added since appear, the credential still works, a delivery accepted
 * before the update and sent again starts no run, the Proposal Trigger emits nothing of what it had
 * emitted and only the change made after the update, and the chat auto-reply sample runs in the editor.
 * Steps run in order in one page; each depends on the ones before.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';

import { startSandbox, type Sandbox } from '../../sandbox';
import type { RequestLogEntry } from '../../sandbox/core';
import { launchChromium, type Browser } from '../../scripts/browser/chromium';
import { APP_NAME, CHAT_SAMPLE_ID, dismissOverlays, openNewWorkflow, runChatSampleWithTestEvent, signIn } from '../../scripts/browser/editor';
import { PACKAGE_NAME, REPO_ROOT, SAMPLE_CREDENTIAL, WORKFLOWS_DIR, buildPackage, pollEverySeconds, sandboxCredential, type WorkflowNode } from '../../scripts/n8n/agencyInbox';
import { bindUserFolder, ensureN8n, fetchFromN8n, setPublished, startN8n, type RunningN8n } from '../../scripts/n8n/harness';
import { signedDelivery } from '../../scripts/n8n/signedWebhook';
import { SELECTED_N8N_VERSION } from '../../scripts/n8n/install';
import { makeTempDir, removeTempDir } from '../../scripts/tempDirs';
import { finishedExecutions, listExecutions, sleep, waitFor } from '../e2e/support';
import { readTarballManifest, startNpmRegistry, type NpmRegistry } from './npmRegistry';
import { PREVIOUS_RELEASE, packNextVersion, packRelease } from './releases';

const SETUP_TIMEOUT_MS = 15 * 60_000;
/** n8n's npm packs, unpacks and installs the package: slow on a busy machine. */
const INSTALL_TIMEOUT_MS = 10 * 60_000;
const FIXTURES_DIR = path.join(REPO_ROOT, 'test', 'compat', PREVIOUS_RELEASE.version);
/** The Proposal Trigger of the fixture polls every 5 s here (n8n's own poll times; the fixture polls every minute). */
const POLL_SECONDS = 5;

interface SavedWorkflow {
	name: string;
	nodes: WorkflowNode[];
	connections: Record<string, unknown>;
	settings?: object;
}

describe('n8n-nodes-agency-inbox installed and updated from n8n\'s Community Nodes screen (headless Chromium, a local registry)', () => {
	let workDir: string;
	let sandbox: Sandbox | undefined;
	let registry: NpmRegistry | undefined;
	let n8n: RunningN8n | undefined;
	let browser: Browser | undefined;
	let page: Page;
	let nextVersion: { file: string; version: string };
	const timings: Record<string, number> = {};
	const startedAt = Date.now();
	/** What the user made under 0.1.0. */
	const made = { credentialId: '', webhookWorkflowId: '', proposalWorkflowId: '', webhookUrl: '', delivery: undefined as ReturnType<typeof signedDelivery> | undefined, repliedUid: '' };

	const rest = async <T>(method: string, route: string, body?: object): Promise<T> => {
		const response = await fetchFromN8n(`${n8n!.url}/rest${route}`, { method, headers: n8n!.restHeaders, body: body && JSON.stringify(body) });
		if (!response.ok) throw new Error(`${method} /rest${route}: ${response.status} ${await response.text()}`);
		return ((await response.json()) as { data: T }).data;
	};
	const runsOf = async (workflowId: string) => finishedExecutions(await listExecutions(n8n!.url, n8n!.restHeaders, workflowId));
	const crmRows = async () => ((await (await fetch(`${sandbox!.origin}/_sandbox/crm`)).json()) as { data: Array<Record<string, unknown>> }).data;
	/** Requests the service saw for the proposal list: each poll of the Proposal Trigger makes one or more. */
	const proposalListRequests = async () => ((await (await fetch(`${sandbox!.origin}/_sandbox/requests`)).json()) as { data: RequestLogEntry[] }).data.filter((request) => request.path.endsWith('/proposals')).length;
	const rowsWith = (uid: string) => async () => (await crmRows()).filter((row) => JSON.stringify(row).includes(`"${uid}"`));
	const timed = async <T>(label: string, step: () => Promise<T>): Promise<T> => {
		const stepAt = Date.now();
		try {
			return await step();
		} finally {
			timings[label] = Date.now() - stepAt;
		}
	};

	/** A workflow as saved with 0.1.0, its Agency Inbox nodes pointed at the user's credential. */
	async function savedWorkflow(file: string): Promise<SavedWorkflow> {
		const saved = JSON.parse(await fs.readFile(path.join(FIXTURES_DIR, file), 'utf8')) as SavedWorkflow;
		for (const node of saved.nodes) {
			if (node.credentials?.[SAMPLE_CREDENTIAL.type]) node.credentials[SAMPLE_CREDENTIAL.type] = { id: made.credentialId, name: SAMPLE_CREDENTIAL.name };
		}
		return saved;
	}

	async function createWorkflow(workflow: SavedWorkflow): Promise<string> {
		const { id } = await rest<{ id: string }>('POST', '/workflows', { name: workflow.name, nodes: workflow.nodes, connections: workflow.connections, settings: workflow.settings ?? {}, active: false });
		return id;
	}

	/** The package's card on Settings → Community Nodes, once it shows `version`. */
	async function packageCard(version: string) {
		const card = page.getByTestId('community-package-card').filter({ hasText: PACKAGE_NAME }).filter({ hasText: `v${version}` });
		await card.waitFor({ timeout: INSTALL_TIMEOUT_MS });
		return card;
	}

	/** The nodes a package card lists ("3 nodes: Agency Inbox, ..."), sorted. */
	async function cardNodes(card: Awaited<ReturnType<typeof packageCard>>): Promise<string[]> {
		const listed = /\d+ nodes?:\s*([^\n]+)/.exec(await card.innerText())?.[1] ?? '';
		return listed.split(',').map((name) => name.trim()).filter(Boolean).sort();
	}

	/** Steps depend on the ones before: after a failure the next ones say so at once instead of timing out. */
	const stepsDone = new Set<string>();
	const needs = (step: string) => {
		if (!stepsDone.has(step)) throw new Error(`an earlier step failed: "${step}" did not complete`);
	};

	/** The entries the nodes panel lists when searching the app's name, without the " Trigger" n8n shows on some. */
	async function nodesPanelEntries(): Promise<string[]> {
		await openNewWorkflow(page, { n8nUrl: n8n!.url } as Parameters<typeof openNewWorkflow>[1]);
		await page.getByTestId('canvas-add-button').click();
		const panel = page.getByTestId('node-creator');
		await panel.getByTestId('node-creator-search-bar').fill(APP_NAME);
		const names = panel.getByTestId('node-creator-item-name');
		// The search applies a moment after typing; until then the panel lists n8n's own triggers.
		await names.filter({ hasText: APP_NAME }).first().waitFor();
		await waitFor('the search results', async () => (await names.allInnerTexts()).map((text) => text.trim()), (texts) => texts.every((text) => text.startsWith(APP_NAME)));
		const entries = (await names.allInnerTexts()).map((text) => text.trim().replace(/ Trigger$/, ''));
		await page.keyboard.press('Escape');
		return entries.sort();
	}

	beforeAll(async () => {
		const progress = (line: string) => process.stderr.write(`${line}\n`);
		workDir = makeTempDir('community-install');
		const packagesDir = path.join(workDir, 'packages');
		await fs.mkdir(packagesDir);
		await timed('build, install n8n if missing', () => Promise.all([buildPackage(progress), ensureN8n(SELECTED_N8N_VERSION, progress)]));
		const previousFile = await timed(`rebuild ${PREVIOUS_RELEASE.version}`, () => packRelease(PREVIOUS_RELEASE, packagesDir));
		nextVersion = await packNextVersion(packagesDir);
		registry = await startNpmRegistry(path.join(workDir, 'registry'));
		registry.publish(await readTarballManifest(previousFile));
		sandbox = await startSandbox({ requestsPerMinute: 0 });

		const userFolder = path.join(workDir, 'user');
		await bindUserFolder({ userFolder, n8nVersion: SELECTED_N8N_VERSION });
		// npm's cache of its own: the stand-in's packuments never reach the user's.
		const env = { GENERIC_TIMEZONE: 'UTC', ...registry.env(), npm_config_cache: path.join(workDir, 'npm-cache') };
		const [started, launched] = await Promise.allSettled([timed('n8n start', () => startN8n({ userFolder, env })), launchChromium()]);
		if (started.status === 'fulfilled') n8n = started.value;
		if (launched.status === 'fulfilled') browser = launched.value;
		if (started.status === 'rejected') throw started.reason;
		if (launched.status === 'rejected') throw launched.reason;
		page = await launched.value.context.newPage();
		await signIn(page, { n8nUrl: started.value.url, owner: started.value.owner } as Parameters<typeof signIn>[1]);
	}, SETUP_TIMEOUT_MS);

	afterAll(async () => {
		await browser?.close();
		await n8n?.stop().catch(() => undefined);
		await sandbox?.close();
		await registry?.close();
		if (workDir) removeTempDir(workDir);
		timings['total'] = Date.now() - startedAt;
		process.stderr.write(`community install test timings (ms): ${JSON.stringify(timings)}\n`);
	});

	beforeEach(async () => {
		if (page) await dismissOverlays(page);
	});

	it(`installs the registry's latest, ${PREVIOUS_RELEASE.version}, from Settings → Community Nodes → Install; its nodes appear in the nodes panel`, async () => {
		await timed('install from the screen', async () => {
			await page.goto(`${n8n!.url}/settings/community-nodes`);
			// Without a package installed, the page shows only its empty state's button.
			await page.getByTestId('install-community-node-button').or(page.getByRole('button', { name: 'Install a community node' })).first().click();
			await page.getByTestId('package-name-input').fill(PACKAGE_NAME);
			await page.getByTestId('user-agreement-checkbox').click();
			await page.getByTestId('install-community-package-button').click();
		});
		expect(await cardNodes(await packageCard(PREVIOUS_RELEASE.version))).toEqual(['Agency Inbox', 'Agency Inbox Proposal Trigger', 'Agency Inbox Trigger']);
		// From the registry, through n8n's npm: the packument, then the tarball.
		expect(registry!.requests).toEqual(expect.arrayContaining([`GET /${PACKAGE_NAME}`, `GET /${PACKAGE_NAME}/-/${PACKAGE_NAME}-${PREVIOUS_RELEASE.version}.tgz`]));
		// The panel merges the webhook trigger into the app's entry.
		expect(await nodesPanelEntries()).toEqual(['Agency Inbox', 'Agency Inbox Proposal']);
		stepsDone.add('install');
	});

	it('under 0.1.0: a credential and the webhook and Proposal Trigger workflows saved with 0.1.0, published; a signed delivery starts one run, a client reply one', async () => {
		needs('install');
		made.credentialId = (await rest<{ id: string }>('POST', '/credentials', { name: SAMPLE_CREDENTIAL.name, type: SAMPLE_CREDENTIAL.type, data: sandboxCredential(sandbox!, 600).data })).id;

		const webhookWorkflow = await savedWorkflow('trigger-webhook.json');
		const trigger = webhookWorkflow.nodes[0];
		made.webhookWorkflowId = await createWorkflow(webhookWorkflow);
		made.webhookUrl = `${n8n!.url}/webhook/${trigger.webhookId}/webhook`;
		// The Proposal Trigger's items go to the sandbox's CRM, one row per item (an HTTP Request node the user added).
		const proposalWorkflow = await savedWorkflow('trigger-proposal.json');
		const proposalTrigger = proposalWorkflow.nodes[0];
		proposalTrigger.parameters.pollTimes = pollEverySeconds(POLL_SECONDS);
		proposalWorkflow.nodes.push({
			id: 'c0a1b2c3-0000-4000-8000-00000000c0a1',
			name: 'Post to CRM',
			type: 'n8n-nodes-base.httpRequest',
			typeVersion: 4.2,
			position: [300, 0],
			parameters: { method: 'POST', url: `${sandbox!.origin}/_sandbox/crm`, sendBody: true, specifyBody: 'json', jsonBody: '={{ JSON.stringify($json) }}', options: {} },
		});
		proposalWorkflow.connections = { [proposalTrigger.name]: { main: [[{ node: 'Post to CRM', type: 'main', index: 0 }]] } };
		made.proposalWorkflowId = await createWorkflow(proposalWorkflow);
		await setPublished(n8n!, made.webhookWorkflowId, true);
		const pollsBefore = await proposalListRequests();
		await setPublished(n8n!, made.proposalWorkflowId, true);

		made.delivery = signedDelivery(made.webhookUrl, sandbox!.signingSecret, 'chat.message.sent', { proposal: { uid: 'prop-0001' }, message: { text: 'Before the update' }, chat: { id: 'room-001' } });
		const answer = await fetchFromN8n(made.webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json', ...made.delivery.headers }, body: made.delivery.body });
		expect(answer.status).toBe(200);
		await waitFor('the delivery\'s run', () => runsOf(made.webhookWorkflowId), (runs) => runs.length >= 1);

		// A change after the activation's first poll (which only notes where to start).
		await waitFor('the Proposal Trigger\'s first poll', proposalListRequests, (count) => count > pollsBefore);
		made.repliedUid = (await (await fetch(`${sandbox!.origin}/_sandbox/changes`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'clientReply' }) })).json() as { data: { proposal: { uid: string } } }).data.proposal.uid;
		await waitFor(`${made.repliedUid} in the CRM`, rowsWith(made.repliedUid), (rows) => rows.length >= 1);
		await sleep(3 * POLL_SECONDS * 1000);
		expect({ webhookRuns: (await runsOf(made.webhookWorkflowId)).length, repliedRows: (await rowsWith(made.repliedUid)()).length }).toEqual({ webhookRuns: 1, repliedRows: 1 });
		stepsDone.add('state under 0.1.0');
	});

	it('offers the next version as an update on the same screen and installs it from the registry; the nodes added since appear', async () => {
		needs('state under 0.1.0');
		registry!.publish(await readTarballManifest(nextVersion.file));
		await timed('update from the screen', async () => {
			await page.goto(`${n8n!.url}/settings/community-nodes`);
			// n8n asks npm (`npm outdated`) which packages have a newer version when the page loads.
			const card = await packageCard(PREVIOUS_RELEASE.version);
			await card.getByRole('button', { name: 'Update' }).click({ timeout: 60_000 });
			await page.getByRole('button', { name: 'Confirm update' }).click();
		});
		expect(await cardNodes(await packageCard(nextVersion.version))).toEqual(['Agency Inbox', 'Agency Inbox Invitation Trigger', 'Agency Inbox Message Trigger', 'Agency Inbox Proposal Trigger', 'Agency Inbox Trigger']);
		expect(registry!.requests).toContain(`GET /${PACKAGE_NAME}/-/${PACKAGE_NAME}-${nextVersion.version}.tgz`);
		expect(await nodesPanelEntries()).toEqual(['Agency Inbox', 'Agency Inbox Invitation', 'Agency Inbox Message', 'Agency Inbox Proposal']);
		stepsDone.add('update');
	});

	it('after the update: the credential is kept; the delivery accepted before it, sent again, starts no run; the Proposal Trigger emits nothing it emitted before, and the change made after it once', async () => {
		needs('update');
		// As the credential dialog tests it: the stored data (secrets redacted), which n8n completes from its database.
		const stored = await rest<{ data: object }>('GET', `/credentials/${made.credentialId}?includeData=true`);
		const tested = await rest<{ status: string; message?: string }>('POST', '/credentials/test', { credentials: { id: made.credentialId, name: SAMPLE_CREDENTIAL.name, type: SAMPLE_CREDENTIAL.type, data: stored.data } });
		expect(tested).toEqual({ status: 'OK', message: expect.any(String) });

		// The service re-delivers (its 200 was lost): same id, same body, a fresh signature.
		const again = await fetchFromN8n(made.webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json', ...made.delivery!.headers }, body: made.delivery!.body });
		expect(again.status).toBe(200);
		// Two poll intervals after the update and the re-delivery: whatever the new code would emit of the past has come.
		await sleep(3 * POLL_SECONDS * 1000);
		expect((await runsOf(made.webhookWorkflowId)).length).toBe(1);
		expect((await rowsWith(made.repliedUid)()).length).toBe(1);
		const rowsBefore = (await crmRows()).length;

		const hiredUid = (await (await fetch(`${sandbox!.origin}/_sandbox/changes`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'hire' }) })).json() as { data: { proposal: { uid: string } } }).data.proposal.uid;
		await waitFor(`${hiredUid} in the CRM`, rowsWith(hiredUid), (rows) => rows.length >= 1);
		await sleep(3 * POLL_SECONDS * 1000);
		const rowsAfter = (await crmRows()).slice(rowsBefore);
		expect(rowsAfter.map((row) => JSON.stringify(row).includes(`"${hiredUid}"`))).toEqual([true]);

		// A new delivery still starts its run: the trigger works after the update.
		const fresh = signedDelivery(made.webhookUrl, sandbox!.signingSecret, 'chat.message.sent', { proposal: { uid: 'prop-0001' }, message: { text: 'After the update' }, chat: { id: 'room-001' } });
		expect((await fetchFromN8n(made.webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json', ...fresh.headers }, body: fresh.body })).status).toBe(200);
		await waitFor('the new delivery\'s run', () => runsOf(made.webhookWorkflowId), (runs) => runs.length >= 2);
	});

	it('runs the chat auto-reply sample with the updated nodes, from the editor with a signed test event', async () => {
		needs('update');
		const sample = JSON.parse((await fs.readFile(path.join(WORKFLOWS_DIR, 'chat-auto-reply.json'), 'utf8')).split('http://127.0.0.1:5680').join(sandbox!.origin)) as SavedWorkflow & { id: string };
		for (const node of sample.nodes) {
			if (node.credentials?.[SAMPLE_CREDENTIAL.type]) node.credentials[SAMPLE_CREDENTIAL.type] = { id: made.credentialId, name: SAMPLE_CREDENTIAL.name };
		}
		await rest('POST', '/workflows', { ...sample, id: CHAT_SAMPLE_ID, active: false });
		const sentBefore = ((await (await fetch(`${sandbox!.origin}/_sandbox/messages`)).json()) as { data: unknown[] }).data.length;
		const run = await runChatSampleWithTestEvent(page, { n8nUrl: n8n!.url, sandbox: { signingSecret: sandbox!.signingSecret } } as Parameters<typeof runChatSampleWithTestEvent>[1]);
		expect(run.deliveryStatus).toBe(200);
		const sent = ((await (await fetch(`${sandbox!.origin}/_sandbox/messages`)).json()) as { data: Array<{ roomId: string; message: string }> }).data.slice(sentBefore);
		expect(sent.map((message) => [message.roomId, message.message.split('\n')[0]])).toEqual([['room-001', 'Thanks for your message! I have seen it and will get back to you shortly.']]);
	});
});
