import type { INodeTypeDescription } from 'n8n-workflow';

import { MAIN_CONNECTION } from './n8nVersions';

/** What every trigger of the package shares: version 1, no input, one output, the credential. */
export function triggerDescription(kind: { polling: boolean }): Pick<INodeTypeDescription, 'group' | 'version' | 'polling' | 'inputs' | 'outputs' | 'credentials'> {
	return {
		group: ['trigger'],
		version: 1,
		...(kind.polling ? { polling: true } : {}),
		inputs: [],
		outputs: [MAIN_CONNECTION],
		credentials: [{ name: 'agencyInboxApi', required: true }],
	};
}
