/**
 * The sticky notes of the sample workflows, as n8n's template library expects them: what the
 * workflow does, what to set up first and how to try it, beside the nodes rather than over them.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { WORKFLOWS_DIR, type WorkflowNode } from '../../scripts/n8n/agencyInbox';

const STICKY_NOTE_TYPE = 'n8n-nodes-base.stickyNote';
/** The box n8n's canvas draws for a node at its position (a trigger's is as tall, rounded). */
const NODE_SIZE = 100;

interface StickyNoteParameters {
	content: string;
	width: number;
	height: number;
	color: number;
}

const samples = fs
	.readdirSync(WORKFLOWS_DIR)
	.filter((file) => file.endsWith('.json'))
	.map((file) => ({ file, nodes: (JSON.parse(fs.readFileSync(path.join(WORKFLOWS_DIR, file), 'utf8')) as { nodes: WorkflowNode[] }).nodes }));

const notesOf = (nodes: WorkflowNode[]) => nodes.filter((node) => node.type === STICKY_NOTE_TYPE);

describe.each(samples)('$file', ({ file, nodes }) => {
	const notes = notesOf(nodes);
	const text = notes.map((note) => (note.parameters as unknown as StickyNoteParameters).content).join('\n');

	it('has sticky notes in the form n8n saves them', () => {
		expect(notes.length).toBeGreaterThan(0);
		for (const note of notes) {
			expect(note.typeVersion).toBe(1);
			expect(Object.keys(note.parameters).sort()).toEqual(['color', 'content', 'height', 'width']);
		}
	});

	it('says what the workflow does, what to set up first and how to try it', () => {
		expect(text).toMatch(/^## /);
		expect(text).toContain('### Set up first');
		expect(text).toContain('### Try it');
		expect(text).toContain('*Agency Inbox API* credential');
		if (nodes.some((node) => node.type === 'n8n-nodes-agency-inbox.agencyInboxTrigger')) {
			expect(text).toMatch(/Production URL\*\*, add it as a webhook endpoint in the service's dashboard, and paste that endpoint's signing secret/);
		}
		if (file === 'proposals-to-crm.json') expect(text).toContain('**CRM URL**');
	});

	it('puts its notes beside the nodes, not over them', () => {
		const covered = nodes
			.filter((node) => node.type !== STICKY_NOTE_TYPE)
			.flatMap((node) =>
				notes
					.filter((note) => {
						const { width, height } = note.parameters as unknown as StickyNoteParameters;
						const [noteX, noteY] = note.position;
						const [nodeX, nodeY] = node.position;
						return nodeX < noteX + width && noteX < nodeX + NODE_SIZE && nodeY < noteY + height && noteY < nodeY + NODE_SIZE;
					})
					.map((note) => `${node.name} under ${note.name}`),
			);
		expect(covered).toEqual([]);
	});
});
