/**
 * The Message Trigger's stored starting point never moves backwards: a poll that ends after a later one
 * (two processes, or a poll n8n let overrun) cannot write its older state over the newer one. Real
 * states, from polls through n8n-core's engine against the sandbox.
 */
import type { IDataObject } from 'n8n-workflow';

import { AgencyInboxMessageTrigger } from '../../../nodes/AgencyInboxMessageTrigger/AgencyInboxMessageTrigger.node';
import { loadMessageState, saveMessageState } from '../../../nodes/AgencyInboxMessageTrigger/state';
import { TriggerWorkflow } from '../../helpers/engine';
import { sandboxControl } from '../../helpers/sandboxControl';
import { sandboxPerSuite } from '../../helpers/sandboxPerSuite';

const suite = sandboxPerSuite({ requestsPerMinute: 0 });

/** The trigger node's static data, as n8n keeps it under `node:<name>`. */
const nodeStaticData = (trigger: TriggerWorkflow) => Object.values(trigger.staticData()).find((value) => typeof value === 'object' && value !== null && 'messages' in value) as IDataObject;

it("a poll's older state saved after a newer one leaves the newer one in place", async () => {
	const trigger = new TriggerWorkflow({
		type: 'agencyInboxMessageTrigger',
		nodeType: new AgencyInboxMessageTrigger(),
		parameters: {},
		credentials: { agencyInboxApi: { apiKey: suite.sandbox.apiKey, baseUrl: suite.sandbox.url, requestsPerMinute: 100_000 } },
	});
	expect(await trigger.poll()).toBeNull();
	const older = loadMessageState(nodeStaticData(trigger))!;
	await sandboxControl(suite.sandbox.origin, 'POST', 'changes', { kind: 'clientMessage', roomId: suite.sandbox.state.rooms[0].roomId });
	expect((await trigger.poll())?.[0]).toHaveLength(1);
	const stored = nodeStaticData(trigger);
	const newer = loadMessageState(stored)!;
	expect(newer.seq).toBeGreaterThan(older.seq);
	saveMessageState(stored, older);
	expect(loadMessageState(stored)).toEqual(newer);
});
