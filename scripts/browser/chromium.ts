/**
 * Debian's Chromium (`/usr/bin/chromium`, never a downloaded browser), headless, driven with
 * playwright-core, in a new empty profile folder that is removed when the browser closes (or when
 * the process ends, whatever happened); its HOME and XDG folders are in that profile too.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';

import { chromium, type BrowserContext } from 'playwright-core';
import { makeTempDir, removeTempDir } from '../tempDirs';

export const CHROMIUM_PATH = process.env.AGENCY_INBOX_CHROMIUM || '/usr/bin/chromium';

/** Flags that work as root in a container without a GPU, and keep the browser off the network. */
const CHROMIUM_FLAGS = [
	'--no-sandbox',
	'--disable-gpu',
	'--disable-quic',
	'--no-first-run',
	'--disable-background-networking',
	'--disable-component-update',
	'--disable-sync',
	'--disable-crash-reporter',
	'--disable-breakpad',
];

export interface Browser {
	context: BrowserContext;
	close(): Promise<void>;
}

export async function launchChromium(options: { colorScheme?: 'light' | 'dark'; viewport?: { width: number; height: number } } = {}): Promise<Browser> {
	if (!existsSync(CHROMIUM_PATH)) {
		throw new Error(`${CHROMIUM_PATH} is missing: apt-get update && apt-get install -y --no-install-recommends chromium`);
	}
	const profileDir = makeTempDir('chromium');
	try {
		const context = await chromium.launchPersistentContext(profileDir, {
			executablePath: CHROMIUM_PATH,
			headless: true,
			args: CHROMIUM_FLAGS,
			// Chromium writes its crash reports and settings under HOME and the XDG folders: into the profile, not the user's home.
			env: { ...process.env, HOME: profileDir, XDG_CONFIG_HOME: path.join(profileDir, 'config'), XDG_CACHE_HOME: path.join(profileDir, 'cache') },
			viewport: options.viewport ?? { width: 1280, height: 800 },
			colorScheme: options.colorScheme ?? 'light',
			timezoneId: 'UTC',
			locale: 'en-US',
		});
		let closed: Promise<void> | undefined;
		return {
			context,
			close: () => (closed ??= context.close().catch(() => undefined).finally(() => removeTempDir(profileDir))),
		};
	} catch (error) {
		removeTempDir(profileDir);
		throw error;
	}
}
