/**
 * The AI sample (workflows/ai-chat-reply.json) as saved, and how `npm start` and the tests load it.
 * Its run in a real n8n with a scripted model is test/e2e/aiSample.test.ts.
 */
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
