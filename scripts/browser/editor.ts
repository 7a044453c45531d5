/**
 * What a user does in n8n 2.x's editor with this package, as browser steps: sign in, add nodes from
 * the nodes panel, open resource locator lists, open the credential (which tests it), run a sample
 * workflow with a test event. Shared by `npm run screenshots` and the browser smoke test. Selectors
 * are n8n's own `data-test-id` attributes where it has them, else visible texts.
 */
import { selectors, type Locator, type Page } from 'playwright-core';
import { signedDelivery } from '../n8n/signedWebhook';
import type { EditorEnvironment } from './environment';

selectors.setTestIdAttribute('data-test-id');

/** The app's name in the nodes panel: n8n merges the webhook trigger and the action node into it. */
export const APP_NAME = 'Agency Inbox';
export const PROPOSAL_TRIGGER_NAME = 'Agency Inbox Proposal';
export const CHAT_SAMPLE_ID = 'aiSampleChatFlw1';

/**
 * n8n's editor is slow to load on a busy machine (a resource locator's list took more than 30 s with
 * four suites beside it); a step waits at most this long for what it expects.
 */
export const STEP_TIMEOUT_MS = 120_000;

export async function signIn(page: Page, environment: EditorEnvironment): Promise<void> {
	page.setDefaultTimeout(STEP_TIMEOUT_MS);
	await page.goto(`${environment.n8nUrl}/signin`);
	await page.getByLabel(/email/i).fill(environment.owner.email);
	await page.getByLabel(/password/i).fill(environment.owner.password);
	await page.getByRole('button', { name: /sign in/i }).click();
	await page.waitForURL((url) => !url.pathname.includes('signin'));
}

export async function openNewWorkflow(page: Page, environment: EditorEnvironment): Promise<void> {
	await page.goto(`${environment.n8nUrl}/workflow/new`);
	await page.getByTestId('canvas-add-button').waitFor();
}

/**
 * Opens the nodes panel (the canvas's "Add first step" or its plus button), searches for the
 * package and opens the entry named `itemName`: for the app, its page of actions and triggers.
 */
export async function openInNodesPanel(page: Page, itemName: string): Promise<Locator> {
	const firstStep = page.getByTestId('canvas-add-button');
	await ((await firstStep.isVisible()) ? firstStep : page.getByTestId('node-creator-plus-button')).click();
	const panel = page.getByTestId('node-creator');
	await panel.getByTestId('node-creator-search-bar').fill(APP_NAME);
	await panel.getByTestId('node-creator-item-name').filter({ hasText: new RegExp(`^${itemName}\\s*$`) }).click();
	await panel.getByText('Node details').waitFor();
	return panel;
}

/** Picks an action or trigger (its text in the panel, e.g. "Send a message to a room") and waits for the node's details view. */
export async function pickInNodesPanel(page: Page, entry: string): Promise<Locator> {
	const panel = page.getByTestId('node-creator');
	const item = panel.getByText(entry, { exact: true });
	if (!(await item.isVisible())) {
		// The app's page shows either its triggers or its actions expanded; open the other group.
		const collapsed = panel.getByText(/^(Actions|Triggers) \(\d+\)$/);
		for (const group of await collapsed.all()) {
			if (await item.isVisible()) break;
			await group.click();
		}
	}
	await item.click();
	const ndv = page.getByTestId('ndv');
	await ndv.waitFor();
	return ndv;
}

/** Closes whatever dialog, node view, list or panel a failed step may have left open. */
export async function dismissOverlays(page: Page): Promise<void> {
	const credentialDialog = page.getByTestId('credential-edit-dialog');
	const ndv = page.getByTestId('ndv');
	const nodesPanel = page.getByTestId('node-creator');
	for (let attempt = 0; attempt < 4; attempt++) {
		if (await credentialDialog.isVisible()) await page.keyboard.press('Escape');
		// Escape does not close an open locator list, nor the node view behind it; its close button does.
		else if (await ndv.isVisible()) await page.getByTestId('ndv-close-button').click({ timeout: 5_000 }).catch(() => page.keyboard.press('Escape'));
		else if (await nodesPanel.isVisible()) await page.keyboard.press('Escape');
		else return;
		await page.waitForTimeout(300);
	}
}

/** Opens a node of the canvas by its name (double-click) and waits for its details view. */
export async function openNode(page: Page, name: string): Promise<Locator> {
	await page.getByTestId('canvas-node').filter({ hasText: name }).first().dblclick();
	const ndv = page.getByTestId('ndv');
	await ndv.waitFor();
	return ndv;
}

export async function closeNodeDetails(page: Page): Promise<void> {
	const ndv = page.getByTestId('ndv');
	if (await ndv.isVisible()) await page.getByTestId('ndv-close-button').click();
	await ndv.waitFor({ state: 'hidden' });
}

/**
 * Opens the resource locator `parameterName` (mode "From list") and returns the texts of its first page of
 * items. On a loaded machine a click can land before the list is ready to open (a clean-clone run once
 * waited 120 s for items): a list that shows none within 30 s is closed (a click beside it) and opened
 * again, three times at most.
 */
export async function openLocatorList(page: Page, parameterName: string): Promise<string[]> {
	const items = page.getByTestId('rlc-item');
	for (let attempt = 1; ; attempt++) {
		await page.getByTestId(`resource-locator-${parameterName}`).getByTestId('rlc-input').click();
		try {
			await items.first().waitFor({ timeout: 30_000 });
			return await items.allInnerTexts();
		} catch (error) {
			if (attempt === 3) throw error;
			await page.getByTestId('ndv').getByText('Operation', { exact: true }).click();
		}
	}
}

/** Types into the open list's search field and returns the texts of the items found. */
export async function searchLocatorList(page: Page, text: string): Promise<string[]> {
	const search = page.getByTestId('rlc-search');
	// The test id sits on n8n's input component or on the input itself, depending on the version.
	await ((await search.evaluate((element) => element.tagName)) === 'INPUT' ? search : search.locator('input')).fill(text);
	const items = page.getByTestId('rlc-item');
	await items.filter({ hasNotText: text }).first().waitFor({ state: 'detached' });
	return items.allInnerTexts();
}

/** Picks the list item whose text contains `text` (or the first one) and closes the list. */
export async function pickLocatorItem(page: Page, text?: string): Promise<string> {
	const items = page.getByTestId('rlc-item');
	const item = text === undefined ? items.first() : items.filter({ hasText: text }).first();
	const label = await item.innerText();
	await item.click();
	await items.first().waitFor({ state: 'hidden' });
	return label;
}

export async function closeLocatorList(page: Page): Promise<void> {
	// Escape does not close it; a click beside it does.
	await page.getByTestId('ndv').getByText('Operation', { exact: true }).click();
	await page.getByTestId('rlc-item').first().waitFor({ state: 'hidden' });
}

/**
 * Opens the node's credential (the pencil next to it in the open node). n8n tests a saved
 * credential when its dialog opens and shows the answer; returns that answer's text.
 */
export async function openCredentialAndTest(page: Page): Promise<{ dialog: Locator; message: string }> {
	await page.getByTestId('ndv').getByTestId('credential-edit-button').click();
	const dialog = page.getByTestId('credential-edit-dialog');
	await dialog.waitFor();
	const success = dialog.getByTestId('credentials-config-container-test-success');
	await success.waitFor();
	return { dialog, message: (await success.innerText()).trim() };
}

export async function closeCredentialDialog(page: Page): Promise<void> {
	await page.keyboard.press('Escape');
	await page.getByTestId('credential-edit-dialog').waitFor({ state: 'hidden' });
}

/** Expands "Webhook URLs" of an open webhook trigger and returns the URL it shows (the Test URL first). */
export async function showWebhookUrls(page: Page): Promise<string> {
	const ndv = page.getByTestId('ndv');
	await ndv.getByText('Webhook URLs').click();
	const testUrl = ndv.getByText(/\/webhook-test\//);
	await testUrl.waitFor();
	return (await testUrl.innerText()).trim();
}

export interface SampleRun {
	/** What n8n answered the delivery. */
	deliveryStatus: number;
	/** Nodes shown with a success mark on the canvas. */
	succeededNodes: number;
	roomId: string;
}

/**
 * Opens the chat auto-reply sample, clicks "Execute workflow" (n8n then listens on the trigger's
 * test URL), delivers one signed `chat.message.sent` event there and waits until every node of the
 * canvas shows success.
 */
export async function runChatSampleWithTestEvent(page: Page, environment: EditorEnvironment, event = { roomId: 'room-001', proposalUid: 'prop-0001' }): Promise<SampleRun> {
	await page.goto(`${environment.n8nUrl}/workflow/${CHAT_SAMPLE_ID}`);
	const nodes = page.getByTestId('canvas-node');
	await nodes.first().waitFor();
	// The trigger's Test URL, as a user copies it from the node.
	await openNode(page, 'Client Message');
	const url = await showWebhookUrls(page);
	await closeNodeDetails(page);
	// Off the node, so the canvas shows no hover buttons.
	await page.mouse.move(700, 650);
	await page.getByTestId('execute-workflow-button').click();
	// Shown while n8n waits for the test event.
	await page.getByTestId('stop-execution-waiting-for-webhook-button').waitFor();
	const data = { proposal: { uid: event.proposalUid }, message: { text: 'Hello, are you available this week?' }, chat: { id: event.roomId } };
	const delivery = signedDelivery(url, environment.sandbox.signingSecret, 'chat.message.sent', data);
	const answer = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...delivery.headers }, body: delivery.body });
	if (!answer.ok) throw new Error(`n8n answered the test event with ${answer.status}: ${await answer.text()}`);
	const nodeCount = await nodes.count();
	// Every node with a success mark, or n8n's toast about a failed node (then fail now, not at the timeout).
	const problem = page.getByText(/Problem in node/);
	await page.getByTestId('canvas-node-status-success').nth(nodeCount - 1).or(problem).first().waitFor();
	if (await problem.isVisible()) throw new Error(`the sample failed in the editor's run: ${await problem.innerText()}`);
	return { deliveryStatus: answer.status, succeededNodes: await page.getByTestId('canvas-node-status-success').count(), roomId: event.roomId };
}
