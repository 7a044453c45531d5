/**
 * The Message Trigger as the benches drive it: through n8n-core's engine against a sandbox, the node's
 * own budget lifted so each poll shows what it asks for, each poll with the requests it made.
 */
import type { INodeExecutionData } from 'n8n-workflow';

import { resetProcessMemory } from '../../nodes/shared/processMemory';
import { TriggerWorkflow } from '../../test/helpers/engine';
import { sandboxControl } from '../../test/helpers/sandboxControl';

// Under ts-node, Node resolves `….node` to the codex `….node.json` beside it before `….node.ts`.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { AgencyInboxMessageTrigger } = require('../../nodes/AgencyInboxMessageTrigger/AgencyInboxMessageTrigger.node.ts') as typeof import('../../nodes/AgencyInboxMessageTrigger/AgencyInboxMessageTrigger.node');

/** A request as the sandbox logged it. */
export interface LoggedRequest {
	path: string;
	query: Record<string, string>;
	status: number;
}

/** A new Message Trigger on `sandbox` (this process's memory reset), and a poll that returns its items and the requests it made. */
export function countedMessageTrigger(sandbox: { apiKey: string; url: string; origin: string }) {
	resetProcessMemory();
	const trigger = new TriggerWorkflow({
		type: 'agencyInboxMessageTrigger',
		nodeType: new AgencyInboxMessageTrigger(),
		parameters: {},
		credentials: { agencyInboxApi: { apiKey: sandbox.apiKey, baseUrl: sandbox.url, requestsPerMinute: 1_000_000 } },
	});
	const poll = async (): Promise<{ items: INodeExecutionData[]; requests: LoggedRequest[] }> => {
		await sandboxControl(sandbox.origin, 'DELETE', 'requests');
		const emitted = await trigger.poll();
		return { items: emitted?.[0] ?? [], requests: (await sandboxControl<{ data: LoggedRequest[] }>(sandbox.origin, 'GET', 'requests')).data };
	};
	return { trigger, poll };
}
