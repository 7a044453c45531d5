/**
 * An inbox of 5,000 rooms listed by creation (the sandbox's roomSort=createdAt: a message moves no
 * room, so every page must be read, 200 of 25) in a real n8n (the pinned version, the packed package
 * installed as a community package) with n8n's own publication lease (120 s: n8n fails a publication
 * whose activation takes more than 84 s) and the default budget of 20 requests a minute, the sandbox
 * counting 20 a minute too. The activation (the trigger's first poll, which n8n awaits) stops paging
 * in time: the publication succeeds; no message written before it reaches the CRM; a client message
 * written after it in the first room listed arrives once.
 *
 * Assertions read n8n's publication status, the CRM rows and the sandbox's request log, never
 * timings; the activation's span of room-list requests is printed.
 */
import path from 'node:path';

import { startSandbox, type Sandbox } from '../../sandbox';
import type { RequestLogEntry } from '../../sandbox/core';
import type { ChatRoom } from '../../sandbox/types';
import { NODE_TYPES, buildPackage, installIntoN8n, sandboxCredential } from '../../scripts/n8n/agencyInbox';
import { ensureN8n, fetchFromN8n, startN8n, type RunningN8n } from '../../scripts/n8n/harness';
import { SELECTED_N8N_VERSION } from '../../scripts/n8n/install';
import { makeTempDir, removeTempDir } from '../../scripts/tempDirs';
import { E2E_N8N_ENV, crmPollingWorkflow } from './pollingN8n';
import { getJson, postJson, waitFor } from './support';

const n8nVersion = SELECTED_N8N_VERSION;
const SETUP_TIMEOUT_MS = 30 * 60_000;
const WORKFLOW_ID = 'e2eLargeInbox001';
const ROOMS = 5_000;
const BUDGET_PER_MINUTE = 20;
/** n8n's default lease; a publication fails past 70% of it (84 s). */
const N8N_DEFAULT_LEASE_SECONDS = '120';
/** How the sandbox's request log names the API key of n8n's credential. */
const N8N_KEY = 'key-1';
const ROOM_LIST = '/v1/master-inbox/rooms';
/** A poll at this budget pages for minutes (every page must be read): its message goes out at its end. */
const MESSAGE_WAIT_MS = 15 * 60_000;

interface CrmRow {
	roomId: string;
	storyId: string;
}

describe(`an inbox of ${ROOMS} rooms listed by creation, in a real n8n ${n8nVersion} with its own publication deadline`, () => {
	let sandbox: Sandbox;
	let n8n: RunningN8n | undefined;
	let workDir: string | undefined;

	const crmRows = async () => (await getJson<{ data: CrmRow[] }>(`${sandbox.origin}/_sandbox/crm`)).data;
	const roomListRequests = async () => (await getJson<{ data: RequestLogEntry[] }>(`${sandbox.origin}/_sandbox/requests`)).data.filter((request) => request.apiKey === N8N_KEY && request.path === ROOM_LIST);
	async function n8nRest<T>(method: string, route: string, body?: object): Promise<T> {
		const response = await fetchFromN8n(`${n8n!.url}/rest/workflows/${WORKFLOW_ID}${route}`, { method, headers: n8n!.restHeaders, body: body && JSON.stringify(body) }, true);
		if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${await response.text()}`);
		return ((await response.json()) as { data: T }).data;
	}

	beforeAll(async () => {
		const progress = (line: string) => process.stderr.write(`${line}\n`);
		await Promise.all([buildPackage(progress), ensureN8n(n8nVersion, progress)]);
		sandbox = await startSandbox({ rooms: ROOMS, requestsPerMinute: BUDGET_PER_MINUTE, variants: { roomSort: 'createdAt' } });
		workDir = makeTempDir('e2e-large-inbox');
		const userFolder = path.join(workDir, 'n8n');
		await installIntoN8n({
			userFolder,
			n8nVersion,
			credentials: [sandboxCredential(sandbox, BUDGET_PER_MINUTE)],
			workflows: [
				crmPollingWorkflow({
					id: WORKFLOW_ID,
					name: `E2E: one CRM row per client message, ${ROOMS} rooms`,
					trigger: { name: 'Client Message', type: NODE_TYPES.messageTrigger, parameters: {} },
					row: '{ roomId: $json.payload.chat.id, storyId: $json.message.storyId }',
					sandboxOrigin: sandbox.origin,
				}),
			],
			publish: [],
		});
		n8n = await startN8n({ userFolder, env: { ...E2E_N8N_ENV, N8N_WORKFLOW_PUBLICATION_OUTBOX_LEASE_SECONDS: N8N_DEFAULT_LEASE_SECONDS } });
	}, SETUP_TIMEOUT_MS);

	afterAll(async () => {
		await n8n?.stop();
		await sandbox?.close();
		if (workDir) removeTempDir(workDir);
	});

	it('the publication succeeds within n8n\'s deadline; a message written after it in the first room listed arrives once, nothing written before it does', async () => {
		const { versionId } = await n8nRest<{ versionId: string }>('GET', '');
		await n8nRest('POST', '/activate', { versionId });
		const settled = await waitFor(
			'the publication to end',
			() => n8nRest<{ status: string; triggers: Array<{ errorMessage: string | null }> }>('GET', '/publication-status'),
			(status) => status.status !== 'in_progress' && status.status !== 'not_published',
		);
		const publishedSeenAt = Date.now();
		expect({ status: settled.status, errors: settled.triggers.map((trigger) => trigger.errorMessage).filter(Boolean) }).toEqual({ status: 'published', errors: [] });
		const activation = (await roomListRequests()).filter((request) => Date.parse(request.at) <= publishedSeenAt);
		const span = Date.parse(activation.at(-1)!.at) - Date.parse(activation[0].at);

		// Near the top of the list (the newest rooms first): a room whose client is no agency member.
		const members = new Set(sandbox.state.members.map((member) => member.uid));
		const canReceiveClientMessage = (room: ChatRoom) => room.roomUsers.some((participant) => participant.role === 'client' && !members.has(participant.user.id));
		const firstListed = [...sandbox.state.rooms].sort((a, b) => Date.parse(b.createdAtDateTime) - Date.parse(a.createdAtDateTime)).find(canReceiveClientMessage)!;
		const { data: written } = await postJson<{ data: CrmRow }>(`${sandbox.origin}/_sandbox/changes`, { kind: 'clientMessage', roomId: firstListed.roomId, text: 'Written after the activation' });
		const writtenAt = Date.now();
		await waitFor('the CRM row of the message', crmRows, (rows) => rows.length > 0, MESSAGE_WAIT_MS);
		const arrivedAt = Date.now();
		// The next poll's first page (it shows the room again) passes without a second row.
		const pollsBefore = (await roomListRequests()).filter((request) => !request.query.pageCursor).length;
		await waitFor('the first page read twice more', roomListRequests, (requests) => requests.filter((request) => !request.query.pageCursor).length >= pollsBefore + 2, MESSAGE_WAIT_MS);
		expect((await crmRows()).map((row) => `${row.roomId} ${row.storyId}`)).toEqual([`${written.roomId} ${written.storyId}`]);
		const all = await roomListRequests();
		// The budget keeps every request within the service's limit.
		expect(all.filter((request) => request.status === 429)).toEqual([]);
		process.stderr.write(
			`large inbox: the activation asked for ${activation.length} page(s) of rooms within ${(span / 1000).toFixed(1)} s; ` +
				`the message in the CRM ${((arrivedAt - writtenAt) / 1000).toFixed(0)} s after it was written; ${all.length} room-list requests in all, none answered 429\n`,
		);
	});
});
