/**
 * The node as an AI tool, through n8n-core's engine against the sandbox: what the model reads
 * (descriptions, arguments), how much it gets back by default, and what a failure tells it.
 */
import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { AgencyInbox } from '../../../nodes/AgencyInbox/AgencyInbox.node';
import { asAiTool, resolvedParameters, toolArguments } from '../../helpers/aiTool';
import { byId, injectFault, jsonOf, runAgencyInbox, runAgencyInboxTool, takeRequests, useSandbox } from './fixtures';

const sandbox = useSandbox();
const tool = asAiTool(new AgencyInbox());

/** What the model receives from a successful call: n8n hands it the items' JSON. */
const bytesToModel = (items: IDataObject[]) => Buffer.byteLength(JSON.stringify(items));

const LIST_OPERATIONS: Array<{ name: string; parameters: INodeParameters; keys: string[] }> = [
	{ name: 'proposals', parameters: { resource: 'proposal', operation: 'getAll' }, keys: ['uid', 'status', 'jobTitle', 'chatRoomId', 'latestResult'] },
	{ name: 'chat rooms', parameters: { resource: 'chatRoom', operation: 'getAll' }, keys: ['roomId', 'roomName', 'lastMessage', 'lastMessageAt', 'participants', 'proposalId'] },
	{ name: 'messages', parameters: { resource: 'message', operation: 'getAll', roomId: byId('room-001') }, keys: ['storyId', 'userId', 'userName', 'message', 'createdAt'] },
	{ name: 'members', parameters: { resource: 'member', operation: 'getAll' }, keys: ['uid', 'name', 'role'] },
	{ name: 'invitations', parameters: { resource: 'invitation', operation: 'getAll' }, keys: ['uid', 'status', 'jobTitle', 'freelancerName'] },
];

describe('tool variant: results sized for a model', () => {
	it.each(LIST_OPERATIONS)('$name: a default call returns at most 10 compact records and at most 8 KB', async ({ parameters, keys }) => {
		const result = await runAgencyInboxTool(sandbox(), parameters);
		expect(result.error).toBeUndefined();
		const records = jsonOf(result);
		expect(records.length).toBeGreaterThan(0);
		expect(records.length).toBeLessThanOrEqual(10);
		expect(bytesToModel(records)).toBeLessThanOrEqual(8 * 1024);
		for (const key of keys) expect(records[0]).toHaveProperty(key);
		expect(JSON.stringify(records)).not.toContain('photoUrl');
	});

	it('proposals: exactly 10 by default, in the Simplify shape, and no page beyond what it needs', async () => {
		const records = jsonOf(await runAgencyInboxTool(sandbox(), { resource: 'proposal', operation: 'getAll' }));
		expect(records).toHaveLength(10);
		expect(Object.keys(records[0])).toEqual(expect.arrayContaining(['uid', 'status', 'createdAt', 'updatedAt', 'jobUrl', 'freelancerUid']));
		expect(records[0]).not.toHaveProperty('proposal');
		expect((await takeRequests(sandbox())).filter((r) => r.path.endsWith('/proposals'))).toHaveLength(1);
	});

	it('the model can ask for more (its limit argument)', async () => {
		const records = jsonOf(await runAgencyInboxTool(sandbox(), { resource: 'proposal', operation: 'getAll' }, { inputItems: [{ limit: 25 }] }));
		expect(records).toHaveLength(25);
	});

	it('the user can turn it off: Limit and full records again', async () => {
		const records = jsonOf(await runAgencyInboxTool(sandbox(), { resource: 'proposal', operation: 'getAll', compactForModel: false }));
		expect(records).toHaveLength(50);
		expect(records[0]).toHaveProperty('proposal');
	});

	it('normal runs keep their defaults and shapes', async () => {
		const proposals = jsonOf(await runAgencyInbox(sandbox(), { resource: 'proposal', operation: 'getAll' }));
		expect(proposals).toHaveLength(50);
		expect(proposals[0]).toHaveProperty('proposal.uid');
		const rooms = jsonOf(await runAgencyInbox(sandbox(), { resource: 'chatRoom', operation: 'getAll' }));
		expect(rooms[0]).toHaveProperty('roomUsers');
		expect(rooms[0]).toHaveProperty('lastStory');
	});
});

describe('tool variant: what the model reads', () => {
	const operations: INodeParameters[] = [
		{ resource: 'agency', operation: 'get' },
		{ resource: 'member', operation: 'getAll' },
		{ resource: 'invitation', operation: 'getAll' },
		{ resource: 'proposal', operation: 'get' },
		{ resource: 'proposal', operation: 'getAll' },
		{ resource: 'chatRoom', operation: 'getAll' },
		{ resource: 'message', operation: 'getAll' },
		{ resource: 'message', operation: 'send' },
		{ resource: 'bidIntent', operation: 'cancel' },
	];

	it.each(operations)('$resource $operation: a description of its own, saying what it returns', (operation) => {
		const { toolDescription } = resolvedParameters(tool, operation);
		expect(typeof toolDescription).toBe('string');
		expect((toolDescription as string).length).toBeGreaterThan(80);
		expect(toolDescription).toMatch(/Returns|Lists/);
	});

	it('descriptions are distinct per operation, and name side effects', () => {
		const texts = operations.map((operation) => resolvedParameters(tool, operation).toolDescription as string);
		expect(new Set(texts).size).toBe(operations.length);
		const send = resolvedParameters(tool, { resource: 'message', operation: 'send' }).toolDescription as string;
		expect(send).toMatch(/REAL MESSAGE/);
		expect(send).toMatch(/cannot be unsent/);
		expect(resolvedParameters(tool, { resource: 'bidIntent', operation: 'cancel' }).toolDescription).toMatch(/IRREVERSIBLE/);
		expect(texts.join(' ')).not.toMatch(/oldest first/i);
	});

	it('n8n adds no description of its own ("Set Automatically") to our tool', () => {
		expect(tool.description.properties.some((p) => p.name === 'toolDescription')).toBe(true);
	});

	it('the arguments reach the schema with descriptions ($fromAI)', () => {
		const send = toolArguments(resolvedParameters(tool, { resource: 'message', operation: 'send' }));
		expect(send.map((a) => a.key).sort()).toEqual(['freelancerUid', 'message', 'roomId']);
		for (const argument of send) expect(argument.description?.length).toBeGreaterThan(20);
		const list = toolArguments(resolvedParameters(tool, { resource: 'proposal', operation: 'getAll' }));
		expect(list).toEqual([expect.objectContaining({ key: 'limit', type: 'number', defaultValue: 10 })]);
		expect(toolArguments(resolvedParameters(tool, { resource: 'bidIntent', operation: 'cancel' })).map((a) => a.key)).toEqual(['bidIntentId']);
		expect(toolArguments(resolvedParameters(tool, { resource: 'proposal', operation: 'get' })).map((a) => a.key)).toEqual(['proposalId']);
	});

	it('the normal node has none of it', () => {
		const normal = new AgencyInbox();
		const parameters = resolvedParameters(normal, { resource: 'message', operation: 'send' });
		expect(parameters).not.toHaveProperty('toolDescription');
		expect(parameters).not.toHaveProperty('compactForModel');
		expect(toolArguments(parameters)).toEqual([]);
		expect(parameters.roomId).toMatchObject({ mode: 'list', value: '' });
	});
});

describe('tool variant: failures tell the model what to do', () => {
	it('404: names the ID and says where to take IDs from', async () => {
		const result = await runAgencyInboxTool(sandbox(), { resource: 'proposal', operation: 'get' }, { inputItems: [{ proposalId: 'prop-9999' }] });
		expect(result.error?.message).toMatch(/prop-9999/);
		expect(result.error?.message).toMatch(/Do not guess IDs: take it from the list of proposals/);
		expect(result.error?.message.length).toBeLessThan(400);
	});

	it('400: says which argument to correct', async () => {
		await injectFault(sandbox(), { pathPrefix: '/v1/agency/proposals', status: 400, count: 1 });
		const result = await runAgencyInboxTool(sandbox(), { resource: 'proposal', operation: 'getAll' });
		expect(result.error?.message).toMatch(/Correct that argument and call again/);
	});

	it('400 on Send: the service names the freelancer who is not in the room', async () => {
		const result = await runAgencyInboxTool(
			sandbox(),
			{ resource: 'message', operation: 'send' },
			{ inputItems: [{ roomId: 'room-001', freelancerUid: 'mem-999', message: 'Hello' }] },
		);
		expect(result.error?.message).toMatch(/not a participant of room/);
		expect(result.error?.message).toMatch(/Correct that argument/);
	});

	it('403 on Send: nothing was sent, the freelancer must take part in the room', async () => {
		await injectFault(sandbox(), { method: 'POST', pathPrefix: '/v1/master-inbox/rooms/room-001/stories', status: 403, count: 1 });
		const result = await runAgencyInboxTool(
			sandbox(),
			{ resource: 'message', operation: 'send' },
			{ inputItems: [{ roomId: 'room-001', freelancerUid: 'mem-999', message: 'Hello' }] },
		);
		expect(result.error?.message).toMatch(/Nothing was sent/);
		expect(result.error?.message).toMatch(/taking part in this room/);
	});

	it('403 elsewhere: the key is invalid, do not retry', async () => {
		const result = await runAgencyInboxTool(sandbox(), { resource: 'agency', operation: 'get' }, { credential: { apiKey: 'wrong', baseUrl: sandbox().url } });
		expect(result.error?.message).toMatch(/Do not retry: tell the user/);
		expect(result.error?.message).not.toContain('wrong');
	});

	it('429 with a Retry-After beyond the cap: says it gave up because the wait was too long', async () => {
		await injectFault(sandbox(), { pathPrefix: '/v1/agency/members', status: 429, retryAfter: 600, count: 1 });
		const started = Date.now();
		const result = await runAgencyInboxTool(sandbox(), { resource: 'member', operation: 'getAll' });
		expect(Date.now() - started).toBeLessThan(5_000);
		expect(result.error?.message).toMatch(/asked to wait 600 s \(Retry-After\), longer than the 120 s this node waits at most, so it gave up/);
		expect(result.error?.message).not.toMatch(/after waiting 0 s/);
	});

	it('normal runs keep the headline as message and the guidance as description, also for the long 429', async () => {
		const notFound = await runAgencyInbox(sandbox(), { resource: 'proposal', operation: 'get', proposalId: byId('prop-9999') });
		expect(notFound.error?.message).not.toMatch(/Do not guess/);
		expect(notFound.error?.description).toMatch(/pick the proposal from the list/);
		await injectFault(sandbox(), { pathPrefix: '/v1/agency/members', status: 429, retryAfter: 600, count: 1 });
		const limited = await runAgencyInbox(sandbox(), { resource: 'member', operation: 'getAll' });
		expect(limited.error?.description).toMatch(/asked to wait 600 s/);
		expect(limited.error?.description).not.toMatch(/after waiting 0 s/);
	});
});
