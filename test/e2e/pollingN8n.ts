/**
 * What the end-to-end tests of the polling triggers share: n8n's environment (and that of its durable
 * poll scheduler), a workflow "trigger polling every 3 s → one CRM row per item", and when each row
 * first reached the CRM, for latency figures that are printed, never asserted.
 */
import { createHash } from 'node:crypto';

import { NODE_TYPES, SAMPLE_CREDENTIAL, pollEverySeconds } from '../../scripts/n8n/agencyInbox';
import { N8N_WITHOUT_EDITOR, type WorkflowToImport } from '../../scripts/n8n/harness';
import { sleep } from './support';

/** What every n8n of these tests runs with: UTC, and debug lines (the triggers' "poll skipped" line is one). */
export const E2E_N8N_ENV = { GENERIC_TIMEZONE: 'UTC', N8N_LOG_LEVEL: 'debug', ...N8N_WITHOUT_EDITOR };

/** n8n 2.37+: poll triggers on the durable scheduler, their cursor committed with the execution. */
export const DURABLE_SCHEDULER = {
	N8N_SCHEDULER_ENABLED: 'true',
	N8N_SCHEDULER_POLL_TRIGGERS_ENABLED: 'true',
	N8N_USE_WORKFLOW_PUBLICATION_SERVICE: 'true',
	N8N_POLLER_DURABLE_CURSORS_ENABLED: 'true',
};

export interface CrmPollingWorkflow {
	id: string;
	name: string;
	/** One of our polling triggers (NODE_TYPES) with its parameters; pollTimes is set here. */
	trigger: { name: string; type: (typeof NODE_TYPES)[keyof typeof NODE_TYPES]; parameters: Record<string, unknown> };
	/** An n8n expression (without `={{ }}`) of the row to post for each item, e.g. `$json`. */
	row: string;
	sandboxOrigin: string;
}

/** A node id n8n accepts (a UUID), the same for the same workflow and node at every run. */
function nodeId(workflowId: string, node: string): string {
	const hex = createHash('sha256').update(`${workflowId}/${node}`).digest('hex');
	return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** The trigger polling every 3 s → HTTP Request posting one row per item to the sandbox's CRM. */
export function crmPollingWorkflow({ id, name, trigger, row, sandboxOrigin }: CrmPollingWorkflow): WorkflowToImport {
	return {
		id,
		name,
		nodes: [
			{
				id: nodeId(id, trigger.name),
				name: trigger.name,
				type: trigger.type,
				typeVersion: 1,
				position: [0, 0],
				parameters: { pollTimes: pollEverySeconds(3), ...trigger.parameters },
				credentials: { agencyInboxApi: { id: SAMPLE_CREDENTIAL.id, name: SAMPLE_CREDENTIAL.name } },
			},
			{
				id: nodeId(id, 'Post to CRM'),
				name: 'Post to CRM',
				type: 'n8n-nodes-base.httpRequest',
				typeVersion: 4.2,
				position: [260, 0],
				parameters: { method: 'POST', url: `${sandboxOrigin}/_sandbox/crm`, sendBody: true, specifyBody: 'json', jsonBody: `={{ JSON.stringify(${row}) }}`, options: {} },
			},
		],
		connections: { [trigger.name]: { main: [[{ node: 'Post to CRM', type: 'main', index: 0 }]] } },
		settings: { executionOrder: 'v1' },
	};
}

/** Reads the rows every 250 ms and keeps when each key was first seen. */
export class ArrivalWatcher<Row> {
	private readonly seenAt = new Map<string, number>();
	private watching = true;
	private readonly loop: Promise<void>;

	constructor(read: () => Promise<Row[]>, keyOf: (row: Row) => string) {
		this.loop = (async () => {
			while (this.watching) {
				try {
					for (const row of await read()) if (!this.seenAt.has(keyOf(row))) this.seenAt.set(keyOf(row), Date.now());
				} catch {
					// The sandbox is closing; the next round ends the loop.
				}
				await sleep(250);
			}
		})();
	}

	firstSeen(key: string): number | undefined {
		return this.seenAt.get(key);
	}

	async stop(): Promise<void> {
		this.watching = false;
		await this.loop;
	}
}

/** "4.2 s" for one event; "n events: min / median / max" for several (an event never seen is counted apart). */
export function latencySummary(events: Array<{ madeAt: number; arrivedAt: number | undefined }>): string {
	const seconds = events
		.filter((event) => event.arrivedAt !== undefined)
		.map((event) => (event.arrivedAt! - event.madeAt) / 1000)
		.sort((a, b) => a - b);
	const missing = events.length - seconds.length;
	const notSeen = missing ? `, ${missing} not seen` : '';
	if (events.length === 1) return seconds.length ? `in the CRM ${seconds[0].toFixed(1)} s later` : 'not seen in the CRM';
	if (!seconds.length) return `${events.length} events, none seen in the CRM`;
	const at = (share: number) => seconds[Math.min(seconds.length - 1, Math.floor(share * seconds.length))].toFixed(1);
	return `${events.length} events, in the CRM after min ${seconds[0].toFixed(1)} s, median ${at(0.5)} s, max ${seconds[seconds.length - 1].toFixed(1)} s${notSeen}`;
}
