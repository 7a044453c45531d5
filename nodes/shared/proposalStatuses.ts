import type { INodePropertyOptions } from 'n8n-workflow';

/** The values the proposals list's status filter accepts. */
export const PROPOSAL_STATUS_OPTIONS: INodePropertyOptions[] = [
	{ name: 'Active', value: 'active' },
	{ name: 'Archived', value: 'archived' },
	{ name: 'Submitted', value: 'submitted' },
];
