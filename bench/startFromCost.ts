/**
 * What Start From: A Date costs for 100, 1,000 and 10,000 items since the date, per polling trigger:
 * the requests the backfill adds to the live part (the same trigger with Start From: Now polled as
 * often, side by side), the polls until it ends (at most 100 items a poll), and the minutes that makes
 * at a poll a minute. Counted by the sandbox (/_sandbox/requests), the node's budget lifted. The Message
 * Trigger's history: the items are client messages, half of the messages written, about 10 a room.
 * Prints; never fails.
 */
import type { IDataObject, INodeExecutionData, INodeParameters, INodeType } from 'n8n-workflow';

import { resetProcessMemory } from '../nodes/shared/processMemory';
import { startSandbox } from '../sandbox';
import { pollUntilBackfilled, since } from '../test/helpers/backfill';
import { TriggerWorkflow } from '../test/helpers/engine';
import { sandboxControl } from '../test/helpers/sandboxControl';

// Under ts-node, Node resolves `….node` to the codex `….node.json` beside it before `….node.ts`.
/* eslint-disable @typescript-eslint/no-require-imports */
const { AgencyInboxProposalTrigger } = require('../nodes/AgencyInboxProposalTrigger/AgencyInboxProposalTrigger.node.ts') as typeof import('../nodes/AgencyInboxProposalTrigger/AgencyInboxProposalTrigger.node');
const { AgencyInboxMessageTrigger } = require('../nodes/AgencyInboxMessageTrigger/AgencyInboxMessageTrigger.node.ts') as typeof import('../nodes/AgencyInboxMessageTrigger/AgencyInboxMessageTrigger.node');
const { AgencyInboxInvitationTrigger } = require('../nodes/AgencyInboxInvitationTrigger/AgencyInboxInvitationTrigger.node.ts') as typeof import('../nodes/AgencyInboxInvitationTrigger/AgencyInboxInvitationTrigger.node');
/* eslint-enable @typescript-eslint/no-require-imports */

const SIZES = [100, 1_000, 10_000];
const DEFAULT_BUDGET_PER_MINUTE = 20;

type Sandbox = Awaited<ReturnType<typeof startSandbox>>;

interface Case {
	trigger: string;
	nodeType: () => INodeType;
	type: string;
	parameters: INodeParameters;
	/** Where the trigger's state keeps its ledger (test/helpers/backfill.ts). */
	state: { key: string; nested: boolean };
	sandbox: (items: number) => Parameters<typeof startSandbox>[0];
	history: (items: number) => IDataObject;
}

const CASES: Case[] = [
	{
		trigger: 'Proposal',
		nodeType: () => new AgencyInboxProposalTrigger(),
		type: 'agencyInboxProposalTrigger',
		parameters: { triggerOn: 'both', simplify: true },
		state: { key: 'watermark', nested: false },
		sandbox: (items) => ({ proposals: items + 200 }),
		history: (items) => ({ messages: 1, proposals: items }),
	},
	{
		trigger: 'Message',
		nodeType: () => new AgencyInboxMessageTrigger(),
		type: 'agencyInboxMessageTrigger',
		parameters: {},
		state: { key: 'messages', nested: true },
		sandbox: (items) => ({ rooms: Math.max(10, items / 10) }),
		history: (items) => ({ messages: 2 * items }),
	},
	{
		trigger: 'Invitation',
		nodeType: () => new AgencyInboxInvitationTrigger(),
		type: 'agencyInboxInvitationTrigger',
		parameters: { triggerOn: 'new' },
		state: { key: 'invitations', nested: true },
		sandbox: () => ({}),
		history: (items) => ({ messages: 1, invitations: items }),
	},
];

const countItems = (result: INodeExecutionData[][] | null) => [(result?.[0] ?? []).filter(({ json }) => json.backfilled === true).length];

async function requestsMade(sandbox: Sandbox): Promise<number> {
	const { data } = await sandboxControl<{ data: unknown[] }>(sandbox.origin, 'GET', 'requests');
	await sandboxControl(sandbox.origin, 'DELETE', 'requests');
	return data.length;
}

async function measure(test: Case, items: number): Promise<string> {
	const sandbox = await startSandbox({ requestsPerMinute: 0, maxPageSize: 100, ...test.sandbox(items) });
	try {
		resetProcessMemory();
		await sandboxControl(sandbox.origin, 'POST', 'changes', { kind: 'recentHistory', days: 30, ...test.history(items) });
		const credentials = { agencyInboxApi: { apiKey: sandbox.apiKey, baseUrl: sandbox.url, requestsPerMinute: 1_000_000 } };
		const withDate = new TriggerWorkflow({ type: test.type, nodeType: test.nodeType(), parameters: { ...test.parameters, ...since(40) }, credentials });
		const live = new TriggerWorkflow({ type: test.type, nodeType: test.nodeType(), parameters: test.parameters, credentials });
		await withDate.poll();
		await live.poll();
		await requestsMade(sandbox);
		const started = Date.now();
		const polls = await pollUntilBackfilled(withDate, test.state, countItems, 1_000);
		const withDateRequests = await requestsMade(sandbox);
		for (let i = 0; i < polls.length; i++) await live.poll();
		const liveRequests = await requestsMade(sandbox);
		const handed = polls.flat().reduce((sum, count) => sum + count, 0);
		const added = withDateRequests - liveRequests;
		return `${test.trigger} Trigger, ${items} items: ${handed} handed on in ${polls.length} polls (${polls.length} minutes at a poll a minute), ${added} requests beyond the live part (${withDateRequests} against ${liveRequests} with Now: ${((100 * added) / (polls.length * DEFAULT_BUDGET_PER_MINUTE)).toFixed(0)}% of the default budget over those minutes); ${((Date.now() - started) / 1000).toFixed(1)} s here`;
	} finally {
		await sandbox.close();
	}
}

async function main() {
	for (const test of CASES) for (const items of SIZES) console.log(await measure(test, items));
}

void main().then(
	() => process.exit(0),
	(error: unknown) => {
		console.error(error);
		process.exit(1);
	},
);
