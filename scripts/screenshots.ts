/**
 * `npm run screenshots`: pictures of the package in n8n's editor for the README, taken in headless
 * Chromium (Debian's /usr/bin/chromium) at 1280x800 into docs/images/. Drives the n8n of a running
 * `npm start` when there is one, else starts its own n8n and sandbox set up the same way (and
 * removes them afterwards).
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { launchChromium, type Browser } from './browser/chromium';
import {
	APP_NAME,
	closeCredentialDialog,
	closeLocatorList,
	closeNodeDetails,
	openCredentialAndTest,
	openInNodesPanel,
	openLocatorList,
	openNewWorkflow,
	pickInNodesPanel,
	pickLocatorItem,
	runChatSampleWithTestEvent,
	searchLocatorList,
	showWebhookUrls,
	signIn,
} from './browser/editor';
import { startEditorEnvironment, type EditorEnvironment } from './browser/environment';
import { REPO_ROOT } from './n8n/agencyInbox';

const IMAGES_DIR = path.join(REPO_ROOT, 'docs', 'images');
const say = (line: string) => console.log(`[screenshots] ${line}`);

async function shoot(page: Page, name: string): Promise<void> {
	// Let transitions and lazy icons settle.
	await page.waitForTimeout(600);
	const file = path.join(IMAGES_DIR, `${name}.png`);
	await page.screenshot({ path: file });
	say(`wrote ${path.relative(REPO_ROOT, file)}`);
}

async function lightPictures(page: Page, environment: EditorEnvironment): Promise<void> {
	await signIn(page, environment);
	await openNewWorkflow(page, environment);

	await openInNodesPanel(page, APP_NAME);
	await pickInNodesPanel(page, 'On chat message sent');
	await showWebhookUrls(page);
	await shoot(page, 'webhook-trigger-urls');

	await openCredentialAndTest(page);
	await shoot(page, 'credential-test');
	await closeCredentialDialog(page);
	await closeNodeDetails(page);

	// With a trigger on the canvas the app's page lists its actions first.
	await openInNodesPanel(page, APP_NAME);
	await shoot(page, 'nodes-panel');
	await pickInNodesPanel(page, 'Send a message to a room');
	await openLocatorList(page, 'roomId');
	// A client's rooms share the client's name; the topic and the last message tell them apart.
	await searchLocatorList(page, 'Lena');
	await shoot(page, 'room-list');
	await closeLocatorList(page);
	await closeNodeDetails(page);

	await runChatSampleWithTestEvent(page, environment, { roomId: 'room-002', proposalUid: 'prop-0002' });
	await shoot(page, 'sample-run');
}

async function darkPicture(page: Page, environment: EditorEnvironment): Promise<void> {
	await signIn(page, environment);
	await openNewWorkflow(page, environment);
	await openInNodesPanel(page, APP_NAME);
	await pickInNodesPanel(page, 'Send a message to a room');
	await openLocatorList(page, 'roomId');
	await pickLocatorItem(page);
	await openLocatorList(page, 'freelancerUid');
	await shoot(page, 'freelancer-list-dark');
}

async function main(): Promise<void> {
	const startedAt = Date.now();
	mkdirSync(IMAGES_DIR, { recursive: true });
	let environment: EditorEnvironment | undefined;
	let browser: Browser | undefined;
	const stopAll = async () => {
		await browser?.close();
		await environment?.stop();
	};
	process.once('SIGINT', () => void stopAll().then(() => process.exit(130)));
	process.once('SIGTERM', () => void stopAll().then(() => process.exit(143)));
	try {
		environment = await startEditorEnvironment({ reuseNpmStart: true, log: say });
		browser = await launchChromium({ colorScheme: 'light' });
		await lightPictures(await browser.context.newPage(), environment);
		await browser.close();
		// n8n follows the system's theme by default.
		browser = await launchChromium({ colorScheme: 'dark' });
		await darkPicture(await browser.context.newPage(), environment);
	} finally {
		await stopAll();
	}
	say(`done in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
}

main().catch((error) => {
	console.error(`[screenshots] failed: ${error.stack ?? error.message}`);
	process.exit(1);
});
