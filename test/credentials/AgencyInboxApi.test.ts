import { startSandbox, type Sandbox } from '../../sandbox';
import { testCredential } from '../helpers/engine';

let sandbox: Sandbox;

beforeAll(async () => {
	sandbox = await startSandbox();
});

afterAll(async () => {
	await sandbox.close();
});

describe('Agency Inbox API credential test (GET /v1/agency)', () => {
	it('passes with the right key, also with a trailing slash on the Base URL', async () => {
		await expect(testCredential({ apiKey: sandbox.apiKey, baseUrl: sandbox.url })).resolves.toEqual({
			status: 'OK',
			message: 'Connection successful!',
		});
		await expect(testCredential({ apiKey: sandbox.apiKey, baseUrl: `${sandbox.url}/` })).resolves.toMatchObject({
			status: 'OK',
		});
	});

	it('says the key is invalid, and what to do, for a wrong key (403)', async () => {
		const result = await testCredential({ apiKey: 'not-a-key', baseUrl: sandbox.url });
		expect(result.status).toBe('Error');
		expect(result.message).toContain('HTTP 403');
		expect(result.message).toContain('Create a new key');
		expect(result.message).not.toContain('not-a-key');
	});

	it('says no key arrived for a missing key (401)', async () => {
		const result = await testCredential({ apiKey: '', baseUrl: sandbox.url });
		expect(result.status).toBe('Error');
		expect(result.message).toContain('HTTP 401');
		expect(result.message).toContain('API Key');
	});

	it('says the budget is spent for now when the service answers 429', async () => {
		const limited = await startSandbox({ requestsPerMinute: 1 });
		try {
			await expect(testCredential({ apiKey: limited.apiKey, baseUrl: limited.url })).resolves.toMatchObject({ status: 'OK' });
			const result = await testCredential({ apiKey: limited.apiKey, baseUrl: limited.url });
			expect(result.status).toBe('Error');
			expect(result.message).toContain('HTTP 429');
			expect(result.message).toContain('Wait a minute');
		} finally {
			await limited.close();
		}
	});

	it('says the Base URL is wrong when /service is missing (404)', async () => {
		const result = await testCredential({ apiKey: sandbox.apiKey, baseUrl: sandbox.origin });
		expect(result.status).toBe('Error');
		expect(result.message).toContain('/service');
	});
});
