/**
 * A scripted OpenAI-compatible chat model on loopback, for n8n's OpenAI Chat Model node (its
 * credential takes a base URL): it records every request and answers with what the test's script
 * returns, as JSON or, when asked to stream, as server-sent events.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ChatRequest {
	tools?: Array<{ type: string; function: { name: string; description: string; parameters: { properties?: Record<string, { description?: string; type?: string }> } } }>;
	messages: Array<{ role: string; content?: string | null; tool_call_id?: string }>;
	stream?: boolean;
}

/** What the model answers: text, or calls of tools by name with their arguments. */
export type ScriptedAnswer = { text: string } | { toolCalls: Array<{ name: string; args: Record<string, unknown> }> };

export interface ScriptedModel {
	/** The data of an openAiApi credential pointing at this model (its base URL in `url`). */
	credentialData: { apiKey: string; url: string };
	requests: ChatRequest[];
	close(): Promise<void>;
}

/** The id of the nth tool call of an answer; the model's next request names it in `tool_call_id`. */
export const toolCallId = (index: number) => `call_${index}`;

function completion(answer: ScriptedAnswer) {
	const message =
		'text' in answer
			? { role: 'assistant', content: answer.text }
			: {
					role: 'assistant',
					content: null,
					tool_calls: answer.toolCalls.map(({ name, args }, index) => ({ id: toolCallId(index), type: 'function', function: { name, arguments: JSON.stringify(args) } })),
				};
	const finishReason = 'text' in answer ? 'stop' : 'tool_calls';
	return { id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'scripted', choices: [{ index: 0, message, finish_reason: finishReason }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } };
}

/** The same answer as two stream chunks (the whole delta, then the finish reason) and [DONE]. */
function writeStream(res: http.ServerResponse, answer: ReturnType<typeof completion>): void {
	const [{ message, finish_reason }] = answer.choices as Array<{ message: { tool_calls?: object[] }; finish_reason: string }>;
	const delta = { ...message, tool_calls: message.tool_calls?.map((call, index) => ({ index, ...call })) };
	const chunk = (choice: object) => `data: ${JSON.stringify({ ...answer, object: 'chat.completion.chunk', choices: [choice] })}\n\n`;
	res.writeHead(200, { 'content-type': 'text/event-stream' });
	res.write(chunk({ index: 0, delta, finish_reason: null }));
	res.write(chunk({ index: 0, delta: {}, finish_reason }));
	res.end('data: [DONE]\n\n');
}

export async function startScriptedModel(script: (request: ChatRequest) => ScriptedAnswer): Promise<ScriptedModel> {
	const requests: ChatRequest[] = [];
	const server = http.createServer((req, res) => {
		let body = '';
		req.on('data', (chunk) => (body += chunk));
		req.on('end', () => {
			const request = JSON.parse(body || '{}') as ChatRequest;
			requests.push(request);
			const answer = completion(script(request));
			if (request.stream) writeStream(res, answer);
			else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	const url = `http://127.0.0.1:${port}/v1`;
	return { credentialData: { apiKey: 'sk-scripted', url }, requests, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** Whether the request already carries tool results (the model's turn after its tool calls). */
export const hasToolResults = (request: ChatRequest) => request.messages.some((message) => message.role === 'tool');

/** The content the model received for its nth tool call, parsed. */
export function toolResultOf(request: ChatRequest, index: number): unknown {
	const message = request.messages.find((candidate) => candidate.role === 'tool' && candidate.tool_call_id === toolCallId(index));
	return JSON.parse(message?.content ?? 'null');
}

/** The reply draftingModel writes about a job. */
export const replyAbout = (jobTitle: string) => `Thank you for your message about "${jobTitle}". We will confirm the start date today.`;

/**
 * Like a model that follows the AI sample's instructions (workflows/ai-chat-reply.json): first reads
 * the proposal and the room named in the prompt, then drafts a reply from what the tools returned
 * (the job's title).
 */
export function draftingModel(request: ChatRequest): ScriptedAnswer {
	if (!hasToolResults(request)) {
		const prompt = request.messages.find((message) => message.role === 'user')?.content ?? '';
		const [proposalId] = /prop-\d+/.exec(prompt) ?? [''];
		const [roomId] = /room-\d+/.exec(prompt) ?? [''];
		return { toolCalls: [{ name: 'get_proposal', args: { proposalId } }, { name: 'get_room_messages', args: { roomId } }] };
	}
	const [proposal] = toolResultOf(request, 0) as Array<{ job: { title: string } }>;
	return { text: replyAbout(proposal.job.title) };
}
