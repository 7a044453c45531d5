/**
 * What an n8n process keeps of our nodes after 1,000 workflows were activated, used and deactivated,
 * against where it started. The process is a child of this script, driving n8n-core's engine as the
 * engine tests do (`test/helpers/engine.ts`), with `--expose-gc`; the sandbox runs in this script, so
 * its data is not counted. Each workflow holds the Agency Inbox Trigger and the three polling
 * triggers; first all are activated (the trigger's create(), each polling node's first poll), then
 * used (two deliveries and a re-delivery at the Production URL, a test listening session with one
 * delivery at the Test URL, a poll of each polling node, a run of the action node), then deactivated
 * (the trigger's delete(); n8n calls nothing for polling nodes). The heap is read after a full
 * collection at the start, with the 1,000 active, after the deactivations, and once the lifetimes
 * where n8n says nothing (processMemory.ts) have passed on the owner's clock and one more poll used
 * the stores. n8n's deduplication store, which stands for n8n's database here, is emptied after each
 * workflow is deactivated. Prints the ratio against the bound; never fails.
 *
 *   node --require ts-node/register/transpile-only bench/processMemory.ts
 *
 * Environment: BENCH_WORKFLOWS (default 1000).
 */
import { fork } from 'node:child_process';

import { HookContext } from 'n8n-core';
import type { INodeType } from 'n8n-workflow';

import { processMemoryStores, processMemoryTiming, ProcessStore } from '../nodes/shared/processMemory';
import { startSandbox } from '../sandbox';
import { deduplicationStore } from '../test/helpers/deduplicationStore';
import { runNode, TriggerWorkflow, type CredentialData } from '../test/helpers/engine';
import { newSigningSecret, signDelivery } from '../test/nodes/AgencyInboxTrigger/signedDeliveries';
import { answerAfterRun, n8nRequest, RecordedResponse } from '../test/nodes/AgencyInboxTrigger/webhookRequests';

/* eslint-disable @typescript-eslint/no-require-imports */
// Under ts-node, Node resolves `….node` to the codex `….node.json` beside it before `….node.ts`.
const { AgencyInbox } = require('../nodes/AgencyInbox/AgencyInbox.node.ts') as typeof import('../nodes/AgencyInbox/AgencyInbox.node');
const { AgencyInboxTrigger } = require('../nodes/AgencyInboxTrigger/AgencyInboxTrigger.node.ts') as typeof import('../nodes/AgencyInboxTrigger/AgencyInboxTrigger.node');
const { AgencyInboxProposalTrigger } = require('../nodes/AgencyInboxProposalTrigger/AgencyInboxProposalTrigger.node.ts') as typeof import('../nodes/AgencyInboxProposalTrigger/AgencyInboxProposalTrigger.node');
const { AgencyInboxMessageTrigger } = require('../nodes/AgencyInboxMessageTrigger/AgencyInboxMessageTrigger.node.ts') as typeof import('../nodes/AgencyInboxMessageTrigger/AgencyInboxMessageTrigger.node');
const { AgencyInboxInvitationTrigger } = require('../nodes/AgencyInboxInvitationTrigger/AgencyInboxInvitationTrigger.node.ts') as typeof import('../nodes/AgencyInboxInvitationTrigger/AgencyInboxInvitationTrigger.node');
/* eslint-enable @typescript-eslint/no-require-imports */

const WORKFLOWS = Number(process.env.BENCH_WORKFLOWS || 1000);
/** What may stay of 1,000 workflows once their memory is let go: about 1 KB each (the heap's own noise included). */
const BOUND_BYTES = 1024 * 1024;
/** The longest lifetime where n8n says nothing, for n8n's default poll times (every minute), and a minute more. */
const PAST_EVERY_LIFETIME_MS = 61 * 60 * 1000;
const ROLE = 'AGENCY_INBOX_BENCH_MEASURED_PROCESS';
/** Workflows run and let go before the start: V8 compiles the code they run (about 2 MB) by then. */
const WARM_UP_WORKFLOWS = 50;

interface SandboxEndpoint {
	url: string;
	apiKey: string;
}

interface Reading {
	label: string;
	heapBytes: number;
	stores: Array<{ name: string; entries: number }>;
}

interface StoreCost {
	/** Microseconds of one read that renews its entry, and of one write, in a store of 10,000 entries. */
	read: number;
	write: number;
	/** Milliseconds of one sweep of that store (at most once a minute). */
	sweep: number;
}

interface Measured {
	readings: Reading[];
	storeCost: StoreCost;
}

const POLLING = [
	['agencyInboxProposalTrigger', () => new AgencyInboxProposalTrigger()],
	['agencyInboxMessageTrigger', () => new AgencyInboxMessageTrigger()],
	['agencyInboxInvitationTrigger', () => new AgencyInboxInvitationTrigger()],
] as const;

/** One workflow: the webhook trigger and the three polling triggers, as n8n builds one per activation. */
class BenchWorkflow {
	readonly webhookTrigger: TriggerWorkflow;

	readonly pollingTriggers: TriggerWorkflow[];

	constructor(
		readonly id: string,
		private readonly credential: CredentialData,
		private readonly secrets: { production: string; test: string },
	) {
		this.webhookTrigger = new TriggerWorkflow(
			{ type: 'agencyInboxTrigger', nodeType: new AgencyInboxTrigger(), parameters: { events: ['*'], options: {} }, credentials: { agencyInboxApi: credential } },
			undefined,
			id,
		);
		this.pollingTriggers = POLLING.map(
			([type, make]) => new TriggerWorkflow({ type, nodeType: make() as INodeType, parameters: {}, credentials: { agencyInboxApi: credential } }, undefined, `${id}-${type}`),
		);
	}

	/** A call of n8n's webhook hooks; `isTest` for those of a listening session (its Test URL). */
	private hook(mode: 'trigger' | 'manual' | 'internal', activation: 'activate' | 'manual' | 'update', isTest = false) {
		const trigger = this.webhookTrigger;
		return new HookContext(trigger.workflow, trigger.node, trigger.additionalData, mode, activation, { isTest } as never);
	}

	async activate(): Promise<void> {
		await new AgencyInboxTrigger().webhookMethods.default.create.call(this.hook('trigger', 'activate'));
		for (const trigger of this.pollingTriggers) await trigger.poll();
	}

	private async deliver(secret: string, id: string, mode: 'webhook' | 'manual'): Promise<void> {
		const body = JSON.stringify({ type: 'chat.message.sent', data: { proposal: { uid: 'prop-0001' }, message: { text: 'Hello' }, chat: { id: 'room-001' } } });
		const response = new RecordedResponse();
		const result = await this.webhookTrigger.webhook(n8nRequest(signDelivery(secret, body, { id })), response, 'default', mode);
		const items = result.workflowData?.[0];
		// n8n answers a delivery that started a run once the run has ended.
		if (items) answerAfterRun(response, await this.webhookTrigger.runStartedBy(items, mode));
	}

	async use(): Promise<void> {
		await this.deliver(this.secrets.production, `msg_${this.id}_1`, 'webhook');
		await this.deliver(this.secrets.production, `msg_${this.id}_2`, 'webhook');
		await this.deliver(this.secrets.production, `msg_${this.id}_1`, 'webhook');
		// A test listening session: n8n registers the Test URL, one delivery, then deregisters it.
		await new AgencyInboxTrigger().webhookMethods.default.create.call(this.hook('manual', 'manual', true));
		await this.deliver(this.secrets.test, `msg_${this.id}_test`, 'manual');
		await new AgencyInboxTrigger().webhookMethods.default.delete.call(this.hook('internal', 'update', true));
		for (const trigger of this.pollingTriggers) await trigger.poll();
		await runNode({ type: 'agencyInbox', nodeType: new AgencyInbox(), parameters: { resource: 'agency', operation: 'get' }, credentials: { agencyInboxApi: this.credential } });
	}

	async deactivate(): Promise<void> {
		await new AgencyInboxTrigger().webhookMethods.default.delete.call(this.hook('internal', 'update'));
		deduplicationStore().rows.clear();
	}
}

async function heapAfterCollection(): Promise<number> {
	const gc = (globalThis as { gc?: () => void }).gc;
	if (!gc) throw new Error('run with --expose-gc');
	for (let round = 0; round < 4; round++) {
		gc();
		await new Promise((resolve) => setImmediate(resolve));
	}
	return process.memoryUsage().heapUsed;
}

async function reading(label: string): Promise<Reading> {
	const heapBytes = await heapAfterCollection();
	return { label, heapBytes, stores: processMemoryStores().map(({ name, entries }) => ({ name, entries })) };
}

/** What the owner costs per use: a store of 10,000 entries, read and written on the real clock. */
function storeCost(): StoreCost {
	const entries = 10_000;
	const store = new ProcessStore<number>({ name: 'bench', belongsTo: 'a bench', lifetime: 'a bench', keptMs: 60_000, renewedOnUse: true, maxEntries: entries });
	for (let index = 0; index < entries; index++) store.set({ execution: String(index) }, index);
	const rounds = 200_000;
	let started = performance.now();
	for (let index = 0; index < rounds; index++) store.get({ execution: String(index % entries) });
	const read = ((performance.now() - started) * 1000) / rounds;
	started = performance.now();
	for (let index = 0; index < rounds; index++) store.set({ execution: String(index % entries) }, index);
	const write = ((performance.now() - started) * 1000) / rounds;
	started = performance.now();
	store.sweep(processMemoryTiming.now());
	return { read, write, sweep: performance.now() - started };
}

/** The measured process: the nodes in n8n-core's engine, nothing else. */
async function measuredProcess(sandbox: SandboxEndpoint): Promise<Measured> {
	const secrets = { production: newSigningSecret(), test: newSigningSecret() };
	const credential = { apiKey: sandbox.apiKey, baseUrl: sandbox.url, requestsPerMinute: 1_000_000, webhookSigningSecret: secrets.production, testWebhookSigningSecret: secrets.test };
	const cycle = async (ids: string[]) => {
		const workflows = ids.map((id) => new BenchWorkflow(id, credential, secrets));
		for (const workflow of workflows) await workflow.activate();
		for (const workflow of workflows) await workflow.use();
		return workflows;
	};
	const deactivate = async (workflows: BenchWorkflow[]) => {
		for (const workflow of workflows) await workflow.deactivate();
	};
	// Every module loaded and every path run once; its memory let go as below.
	await deactivate(await cycle(Array.from({ length: WARM_UP_WORKFLOWS }, (_, index) => `warm-up-${index}`)));
	const realClock = processMemoryTiming.now;
	let clockAheadMs = 0;
	processMemoryTiming.now = () => realClock() + clockAheadMs;
	clockAheadMs += PAST_EVERY_LIFETIME_MS;
	const readings = [await reading(`start (${WARM_UP_WORKFLOWS} workflows run and let go before)`)];

	let workflows: BenchWorkflow[] | undefined = await cycle(Array.from({ length: WORKFLOWS }, (_, index) => `bench-${index}`));
	readings.push(await reading(`${WORKFLOWS.toLocaleString('en-US')} workflows active and used`));
	await deactivate(workflows);
	workflows = undefined;
	readings.push(await reading('all deactivated (n8n dropped its workflows)'));
	clockAheadMs += PAST_EVERY_LIFETIME_MS;
	// The next use of any store lets go of what expired: one more poll, of a workflow activated now.
	const [type, make] = POLLING[2];
	await new TriggerWorkflow({ type, nodeType: make() as INodeType, parameters: {}, credentials: { agencyInboxApi: credential } }, undefined, 'one-more').poll();
	readings.push(await reading('61 minutes later, after one more poll'));
	return { readings, storeCost: storeCost() };
}

const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(2)} MB`;

async function main(): Promise<void> {
	const sandbox = await startSandbox({ requestsPerMinute: 0 });
	const child = fork(__filename, [], {
		execArgv: ['--expose-gc', '--require', 'ts-node/register/transpile-only'],
		env: { ...process.env, [ROLE]: JSON.stringify({ url: sandbox.url, apiKey: sandbox.apiKey }) },
		stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
	});
	const stopChild = () => child.kill();
	process.once('SIGINT', stopChild);
	process.once('SIGTERM', stopChild);
	try {
		const { readings, storeCost: cost } = await new Promise<Measured>((resolve, reject) => {
			child.once('message', (message) => resolve(message as Measured));
			child.once('exit', (code) => reject(new Error(`the measured process ended (${code}) without readings`)));
		});
		const start = readings[0].heapBytes;
		console.log(`Process memory of our nodes in one n8n process (n8n-core's engine, --expose-gc), ${WORKFLOWS.toLocaleString('en-US')} workflows of the webhook trigger and the three polling triggers:`);
		for (const { label, heapBytes, stores } of readings) {
			const entries = stores.map(({ name, entries: count }) => `${name} ${count}`).join(', ');
			console.log(`  ${label}: heap ${megabytes(heapBytes)} (${heapBytes >= start ? '+' : '-'}${megabytes(Math.abs(heapBytes - start))}); entries: ${entries}`);
		}
		const left = readings[readings.length - 1].heapBytes - start;
		const ratio = Math.max(0, left) / BOUND_BYTES;
		const below = left < 0 ? ' (below the start: the heap varies by a megabyte or two from one reading to the next)' : '';
		console.log(`  what the owner costs: a read ${cost.read.toFixed(2)} µs, a write ${cost.write.toFixed(2)} µs in a store of 10,000 entries; a sweep of it ${cost.sweep.toFixed(1)} ms (at most once a minute)`);
		console.log(`  left after the lifetimes: ${left < 0 ? '-' : ''}${megabytes(Math.abs(left))}${below}; ${ratio.toFixed(2)} of the bound of ${megabytes(BOUND_BYTES)}  (target <= 1: ${ratio <= 1 ? 'MET' : 'NOT MET'})`);
	} finally {
		stopChild();
		await sandbox.close();
	}
}

if (process.env[ROLE]) {
	// The parent's end is this process's end too.
	process.once('disconnect', () => process.exit(0));
	measuredProcess(JSON.parse(process.env[ROLE]) as SandboxEndpoint)
		.then((readings) => process.send?.(readings, () => process.exit(0)))
		.catch((error: Error) => {
			console.error(error.stack ?? error.message);
			process.exit(1);
		});
} else if (require.main === module) {
	main().catch((error) => console.log(`Process memory: not measured: ${error.stack ?? error.message}`));
}
