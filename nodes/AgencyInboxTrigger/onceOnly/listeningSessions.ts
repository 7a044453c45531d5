/**
 * The Test URL's listening sessions: n8n calls delete() both when the workflow is deactivated and when
 * a listening session ends, in the same mode, so the trigger keeps the Test URLs it registered to tell
 * which of its two URLs a delete() ends. A test delivery keeps nothing else: the editor shows each one.
 */
import type { IHookFunctions } from 'n8n-workflow';

import { nodeOwnerOf, processStore, type Url, urlOf } from '../../shared/processMemory';

const HOUR_MS = 60 * 60 * 1000;

const listeningSessions = processStore<true>({
	name: 'listening sessions at the Test URL',
	belongsTo: 'a webhook trigger node at its Test URL',
	lifetime: 'until the session ends (delete()), at most an hour (n8n ends a session after 2 minutes)',
	keptMs: HOUR_MS,
	renewedOnUse: false,
	maxEntries: 10_000,
});

/** When a listening session registers the Test URL (mode 'manual'). */
export function registerTrigger(context: IHookFunctions): void {
	if (urlOf(context.getMode()) === 'test') listeningSessions.set({ ...nodeOwnerOf(context), url: 'test' }, true, context.getNodeWebhookUrl('default') ?? '');
}

/** Which of the trigger's URLs a call of delete() ends: a Test URL this process registered is the session's. */
export function urlEnding(context: IHookFunctions): Url {
	const session = { ...nodeOwnerOf(context), url: 'test' } as const;
	return listeningSessions.get(session, context.getNodeWebhookUrl('default') ?? '') ? 'test' : 'production';
}
