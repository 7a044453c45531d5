/**
 * One sandbox for a describe block: started before its tests and closed after them; before each test
 * it is reseeded (its logs and faults cleared) and this process's memory of the nodes is reset.
 */
import { resetProcessMemory } from '../../nodes/shared/processMemory';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../sandbox';
import { sandboxControl } from './sandboxControl';

export function sandboxPerSuite(options: SandboxOptions): { readonly sandbox: Sandbox } {
	const suite = { sandbox: undefined as unknown as Sandbox };
	beforeAll(async () => {
		suite.sandbox = await startSandbox(options);
	});
	afterAll(async () => {
		await suite.sandbox?.close();
	});
	beforeEach(async () => {
		resetProcessMemory();
		await sandboxControl(suite.sandbox.origin, 'POST', 'reset');
	});
	return suite;
}
