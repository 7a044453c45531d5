/**
 * Requests per poll of the Agency Inbox Proposal Trigger for an agency with 10,000 proposals and k
 * changes since the last poll, against one full sweep without updatedSince (the only other way to see
 * changes). Counted by the sandbox (/_sandbox/requests). Target at k = 10: at least 50x fewer.
 * Prints; never fails.
 */
import { resetProcessMemory } from '../nodes/shared/processMemory';
import { startSandbox } from '../sandbox';
import { TriggerWorkflow } from '../test/helpers/engine';
import { sandboxControl } from '../test/helpers/sandboxControl';

// Under ts-node, Node resolves `….node` to the codex `….node.json` beside it before `….node.ts`.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { AgencyInboxProposalTrigger } = require('../nodes/AgencyInboxProposalTrigger/AgencyInboxProposalTrigger.node.ts') as typeof import('../nodes/AgencyInboxProposalTrigger/AgencyInboxProposalTrigger.node');

const PROPOSALS = 10_000;
const CHANGE_COUNTS = [0, 10, 1000];
const TARGET_RATIO_AT_10 = 50;
const CHANGE_KINDS = ['clientReply', 'viewed', 'hire', 'newProposal'];

type Sandbox = Awaited<ReturnType<typeof startSandbox>>;

async function control(sandbox: Sandbox, method: string, path: string, body?: unknown) {
	return await sandboxControl<{ data: Array<{ path: string }> }>(sandbox.origin, method, path, body);
}

async function proposalListRequests(sandbox: Sandbox): Promise<number> {
	const { data } = await control(sandbox, 'GET', 'requests');
	return data.filter((request) => request.path.endsWith('/v1/agency/proposals')).length;
}

/** What a client without updatedSince must do to see changes: read every page. */
async function fullSweepRequests(sandbox: Sandbox): Promise<number> {
	await control(sandbox, 'DELETE', 'requests');
	let cursor: string | undefined;
	do {
		const url = new URL(`${sandbox.url}/v1/agency/proposals`);
		if (cursor) url.searchParams.set('pageCursor', cursor);
		const page = (await (await fetch(url, { headers: { authorization: `Bearer ${sandbox.apiKey}` } })).json()) as {
			meta: { nextCursor?: string };
		};
		cursor = page.meta.nextCursor;
	} while (cursor);
	return await proposalListRequests(sandbox);
}

async function main() {
	const sandbox = await startSandbox({ proposals: PROPOSALS, requestsPerMinute: 0 });
	try {
		resetProcessMemory();
		const fullSweep = await fullSweepRequests(sandbox);
		const trigger = new TriggerWorkflow({
			type: 'agencyInboxProposalTrigger',
			nodeType: new AgencyInboxProposalTrigger(),
			parameters: { triggerOn: 'both', simplify: true },
			credentials: { agencyInboxApi: { apiKey: sandbox.apiKey, baseUrl: sandbox.url, requestsPerMinute: 1_000_000 } },
		});
		await control(sandbox, 'DELETE', 'requests');
		await trigger.poll(); // activation: notes the clock, no request
		const activationRequests = await proposalListRequests(sandbox);
		const uids = sandbox.state.proposals.map((record) => record.proposal.uid);

		console.log(`Agency with ${PROPOSALS} proposals, default page size; full sweep without updatedSince: ${fullSweep} requests`);
		console.log(`Activation: ${activationRequests} requests (the spec's bootstrap full pass is skipped: nothing historic is emitted)`);
		console.log('k changes | requests per poll | items | full sweep / poll');
		for (const k of CHANGE_COUNTS) {
			for (let index = 0; index < k; index++) {
				const kind = CHANGE_KINDS[index % CHANGE_KINDS.length];
				// Distinct proposals, so k changes are k items.
				await control(sandbox, 'POST', 'changes', kind === 'newProposal' ? { kind } : { kind, proposalUid: uids[(index * 7) % uids.length] });
			}
			await control(sandbox, 'DELETE', 'requests');
			const started = performance.now();
			const result = await trigger.poll();
			const milliseconds = performance.now() - started;
			const requests = await proposalListRequests(sandbox);
			const ratio = fullSweep / Math.max(1, requests);
			const verdict = k === 10 ? `  (target >= ${TARGET_RATIO_AT_10}x: ${ratio >= TARGET_RATIO_AT_10 ? 'met' : 'NOT met'})` : '';
			console.log(
				`${String(k).padStart(9)} | ${String(requests).padStart(17)} | ${String(result?.[0].length ?? 0).padStart(5)} | ${ratio.toFixed(1)}x${verdict}  [${milliseconds.toFixed(0)} ms]`,
			);
		}
		console.log('At the default 20 requests per minute a full sweep of this agency takes', (fullSweep / 20).toFixed(0), 'minutes of budget.');
	} finally {
		await sandbox.close();
	}
}

main().catch((error: Error) => console.log(`pollRequests stopped: ${error.stack ?? error.message}`));
