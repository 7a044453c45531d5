/** What the Message Trigger's tests need to tell about rooms' proposals: the sandbox's truth and the trigger's progress. */
import type { IDataObject } from 'n8n-workflow';

import type { SandboxState } from '../../../sandbox';
import type { TriggerWorkflow } from '../../helpers/engine';

/** The Message Trigger's state as n8n persists it (JSON). */
export function messageState(trigger: TriggerWorkflow): IDataObject | undefined {
	const persisted = JSON.parse(JSON.stringify(trigger.workflow.staticData)) as IDataObject;
	return (persisted['node:Node Under Test'] as IDataObject | undefined)?.messages as IDataObject | undefined;
}

/** Whether the trigger has read the proposal list through (the activation's full pass spans polls). */
export function proposalsRead(trigger: TriggerWorkflow): boolean {
	const index = (messageState(trigger)?.proposals as { index?: { pass?: unknown } } | undefined)?.index;
	return index !== undefined && index.pass === undefined;
}

/** Polls (each emitting nothing) until the trigger has read the proposal list through; the number of polls it took. */
export async function untilProposalsRead(trigger: TriggerWorkflow): Promise<number> {
	let polls = 0;
	while (!proposalsRead(trigger)) {
		if (++polls > 200) throw new Error('the proposal list was not read through in 200 polls');
		const emitted = await trigger.poll();
		if (emitted !== null) throw new Error(`a poll while the proposals were read emitted ${JSON.stringify(emitted)}`);
	}
	return polls;
}

/** The proposals whose chatRoomId is the room, as the item lists them: most recently updated first, at the same time the higher uid first. */
export function proposalsOfRoom(state: SandboxState, roomId: string) {
	const rank = (updatedAt: string | null) => (updatedAt === null ? -Infinity : Date.parse(updatedAt));
	return state.proposals
		.filter((record) => record.proposal.chatRoomId === roomId)
		.sort((a, b) => rank(b.proposal.updatedAt) - rank(a.proposal.updatedAt) || (a.proposal.uid < b.proposal.uid ? 1 : -1))
		.map(({ proposal, freelancer }) => ({ uid: proposal.uid, status: proposal.status, updatedAt: proposal.updatedAt, freelancer: { uid: freelancer.uid, name: freelancer.name } }));
}
