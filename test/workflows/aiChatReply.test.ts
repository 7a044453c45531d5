/**
 * The AI sample (workflows/ai-chat-reply.json) as saved, how `npm start` and the tests load it, and
 * its run through n8n-core's engine under every reading of what the spec leaves open. Its run in a
 * real n8n with a scripted model is test/e2e/aiSample.test.ts.
 */
import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeType } from 'n8n-workflow';

import { SINGLE_READINGS } from '../../sandbox';
import type { SentMessage } from '../../sandbox/types';
import { nodeOutput } from '../helpers/engine';
import { control, jsonOf, runAgencyInboxTool, takeRequests } from '../nodes/AgencyInbox/fixtures';
import { nodeOf, runSample, sampleWebhookTrigger, standInDescription, triggerItems, useSampleSandbox } from './sampleRuns';
import { demoChatModel, loadSampleWorkflows, needsChatModel, SAMPLE_MODEL_CREDENTIAL, SAMPLE_SANDBOX_ORIGIN, type WorkflowNode } from '../../scripts/n8n/agencyInbox';

const SAMPLE_ID = 'aiSampleAiReply1';

async function aiSample(chatModelName?: string) {
	const workflows = await loadSampleWorkflows({ sandboxOrigin: SAMPLE_SANDBOX_ORIGIN, withChatModel: true, chatModelName });
	const sample = workflows.find((workflow) => workflow.id === SAMPLE_ID)!;
	const nodes = sample.nodes as WorkflowNode[];
	return { sample, node: (name: string) => nodes.find((candidate) => candidate.name === name)!, nodes };
}

it('runs in execution order v1, without which n8n resumes the Agent before its tools have run', async () => {
	const { sample } = await aiSample();
	expect(sample.settings).toEqual({ executionOrder: 'v1' });
});

it('gives the model read-only tools with short names; the room and sender of the reply come from the event and the proposal', async () => {
	const { nodes, node } = await aiSample();
	const tools = nodes.filter((candidate) => candidate.type.endsWith('agencyInboxTool'));
	// Continue on error: n8n 1.x would otherwise stop the run at a failing tool (2.x hands the error to the model either way).
	expect(tools.map((tool) => [tool.name, tool.parameters.resource, tool.parameters.operation, tool.onError])).toEqual([
		['get_proposal', 'proposal', 'get', 'continueRegularOutput'],
		['get_room_messages', 'message', 'getAll', 'continueRegularOutput'],
	]);
	expect(node('Send Reply').parameters).toMatchObject({
		roomId: { value: "={{ $('Client Message').item.json.payload.chat.id }}" },
		freelancerUid: { value: '={{ $json.freelancer.uid }}' },
		message: "={{ $('Draft Reply').item.json.output }}",
	});
	expect(node("Proposal's Freelancer").parameters.proposalId).toMatchObject({ value: "={{ $('Client Message').item.json.payload.proposal.uid }}" });
});

it('is loaded only on request, as it cannot run without a chat model', async () => {
	const withoutModel = await loadSampleWorkflows({ sandboxOrigin: SAMPLE_SANDBOX_ORIGIN });
	expect(withoutModel.map((workflow) => workflow.id)).not.toContain(SAMPLE_ID);
	expect(withoutModel.some(needsChatModel)).toBe(false);
	const { node } = await aiSample('llama3.1:8b');
	expect(node('OpenAI Chat Model').parameters.model).toEqual({ __rl: true, mode: 'id', value: 'llama3.1:8b' });
	expect(node('OpenAI Chat Model').credentials).toEqual({ openAiApi: { id: SAMPLE_MODEL_CREDENTIAL.id, name: SAMPLE_MODEL_CREDENTIAL.name } });
});

it('npm start gives it a model only when an API key is set', () => {
	expect(demoChatModel({})).toBeUndefined();
	expect(demoChatModel({ AGENCY_INBOX_OPENAI_API_KEY: 'sk-test' })).toEqual({
		credential: { ...SAMPLE_MODEL_CREDENTIAL, data: { apiKey: 'sk-test', url: 'https://api.openai.com/v1' } },
		modelName: undefined,
	});
	expect(demoChatModel({ AGENCY_INBOX_OPENAI_API_KEY: 'k', AGENCY_INBOX_OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1', AGENCY_INBOX_OPENAI_MODEL: 'llama3.1:8b' })).toEqual({
		credential: { ...SAMPLE_MODEL_CREDENTIAL, data: { apiKey: 'k', url: 'http://127.0.0.1:11434/v1' } },
		modelName: 'llama3.1:8b',
	});
});

/** The AI Agent (not installed here): answers each item with the draft and keeps the prompt n8n resolved for it. */
function draftReplyStandIn(draft: string, prompts: string[]): INodeType {
	return {
		description: standInDescription('AI Agent', [3], 1, [
			{ name: 'promptType', type: 'string', default: 'define' },
			{ name: 'text', type: 'string', default: '' },
			{ name: 'options', type: 'json', default: {} },
		]),
		async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
			return [
				this.getInputData().map((_item, itemIndex) => {
					prompts.push(this.getNodeParameter('text', itemIndex) as string);
					return { json: { output: draft }, pairedItem: { item: itemIndex } };
				}),
			];
		},
	};
}

describe.each(SINGLE_READINGS.map(({ label, variants }) => [label, variants] as const))('as saved, through the engine, under reading %s', (_label, variants) => {
	const setup = useSampleSandbox(SAMPLE_ID, variants, { webhooks: true });

	/** A tool call as n8n's Agent runs the saved tool node, with the model's arguments. */
	async function callTool(name: string, args: IDataObject) {
		const tool = nodeOf(setup.sample, name);
		return await runAgencyInboxTool(setup.sandbox, tool.parameters, { inputItems: [args], continueOnFail: tool.onError === 'continueRegularOutput' });
	}

	it("the tools give the model the event's proposal and its room's messages; the draft is sent once, into that room, as the proposal's freelancer", async () => {
		const { sandbox, sample, inbox } = setup;
		const clientText = 'Could you start next Monday?';
		const { roomId } = (await control(sandbox, 'POST', 'changes', { kind: 'clientMessage', roomId: sandbox.state.rooms[0].roomId, text: clientText })).data as { roomId: string };
		const items = await triggerItems(sampleWebhookTrigger(sample, 'Client Message', sandbox), await inbox.next());
		expect(items).toHaveLength(1);
		const { payload } = items![0].json as { payload: { proposal: { uid: string }; chat: { id: string } } };
		const record = sandbox.state.proposals.find((candidate) => candidate.proposal.uid === payload.proposal.uid)!;
		expect(record.proposal.chatRoomId).toBe(roomId);

		const proposal = await callTool('get_proposal', { proposalId: payload.proposal.uid });
		expect(proposal.error?.message).toBeUndefined();
		expect(jsonOf(proposal)).toEqual([expect.objectContaining({ proposal: expect.objectContaining({ uid: record.proposal.uid }) })]);
		const messages = await callTool('get_room_messages', { roomId: payload.chat.id });
		expect(messages.error?.message).toBeUndefined();
		const roomStoryIds = sandbox.state.stories[roomId].map((story) => story.storyId);
		expect(jsonOf(messages).length).toBeGreaterThan(0);
		expect(jsonOf(messages).length).toBeLessThanOrEqual(10);
		expect(jsonOf(messages).every((message) => roomStoryIds.includes(message.storyId as string))).toBe(true);

		const draft = `Thank you for your message about "${record.job.title}". We will confirm the start date today.`;
		const prompts: string[] = [];
		const run = await runSample(sample, sandbox, { node: 'Client Message', items: items! }, {
			nodeTypes: { '@n8n/n8n-nodes-langchain.agent': draftReplyStandIn(draft, prompts) },
			leaveOut: ['OpenAI Chat Model', 'get_proposal', 'get_room_messages'],
		});
		expect(run.data.resultData.error?.message).toBeUndefined();
		// Whatever the tools return, the model has the client's text, marked as data, and the ids of the event.
		expect(prompts).toHaveLength(1);
		expect(prompts[0]).toContain(`chat room ${roomId} about proposal ${record.proposal.uid}`);
		expect(prompts[0]).toContain(`---\n${clientText}\n---`);
		expect(nodeOutput(run, 'Send Reply')).toEqual([expect.objectContaining({ message: draft })]);
		const sent = (await control<{ data: SentMessage[] }>(sandbox, 'GET', 'messages')).data;
		expect(sent.map(({ roomId: room, freelancerUid, message }) => ({ room, freelancerUid, message }))).toEqual([{ room: roomId, freelancerUid: record.freelancer.uid, message: draft }]);
		expect((await takeRequests(sandbox)).map((request) => `${request.method} ${request.path}`)).toEqual([
			`GET /v1/agency/proposals/${record.proposal.uid}`,
			`GET /v1/master-inbox/rooms/${roomId}/stories`,
			`GET /v1/agency/proposals/${record.proposal.uid}`,
			`POST /v1/master-inbox/rooms/${roomId}/stories`,
		]);
	});
});
