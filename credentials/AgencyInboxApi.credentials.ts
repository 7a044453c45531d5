import type {
	ICredentialDataDecryptedObject,
	ICredentialTestRequest,
	ICredentialType,
	IHttpRequestOptions,
	INodeProperties,
} from 'n8n-workflow';

export class AgencyInboxApi implements ICredentialType {
	name = 'agencyInboxApi';

	displayName = 'Agency Inbox API';

	icon = { light: 'file:../icons/agencyInbox.svg', dark: 'file:../icons/agencyInbox.dark.svg' } as const;

	documentationUrl = 'https://github.com/agency-inbox/n8n-nodes-agency-inbox#credentials';

	properties: INodeProperties[] = [
		{
			displayName: 'API Key',
			name: 'apiKey',
			type: 'string',
			typeOptions: { password: true },
			required: true,
			default: '',
			description: 'Create a key in the web application under Integrations',
		},
		{
			displayName: 'Base URL',
			name: 'baseUrl',
			type: 'string',
			required: true,
			default: '',
			placeholder: 'https://<api host>/service',
			description: 'The API host followed by the path prefix /service. A trailing slash is ignored.',
		},
		{
			displayName: 'Requests per Minute',
			name: 'requestsPerMinute',
			type: 'number',
			typeOptions: { minValue: 1 },
			default: 20,
			description:
				'Request budget shared by every workflow that uses this API key. The service allows 20 per minute unless it raised the limit for your workspace.',
		},
		{
			displayName: 'Processes Sharing This Key',
			name: 'processesSharingKey',
			type: 'number',
			typeOptions: { minValue: 1 },
			default: 1,
			description:
				'How many n8n processes send requests with this key: 1 for a single n8n. In queue mode each worker counts only its own requests (and so does the main, which runs the polling trigger): set the number of workers, plus one if a Proposal Trigger uses this key. Each process then sends at most its share of Requests per Minute.',
		},
		{
			displayName: 'Webhook Signing Secret',
			name: 'webhookSigningSecret',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			description:
				"Signing secret of the endpoint registered with the trigger's Production URL in the service's dashboard (starts with whsec_)",
		},
		{
			displayName: 'Test Webhook Signing Secret',
			name: 'testWebhookSigningSecret',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			description:
				"Signing secret of the endpoint registered with the trigger's Test URL in the service's dashboard (starts with whsec_)",
		},
	];

	/**
	 * A function rather than n8n's generic `=Bearer {{$credentials.apiKey}}`: that expression is
	 * evaluated in the workflow's expression isolate, which n8n 2.x releases at the end of every poll,
	 * so a poll still running when the next one ended failed with "No bridge acquired".
	 */
	async authenticate(credentials: ICredentialDataDecryptedObject, requestOptions: IHttpRequestOptions): Promise<IHttpRequestOptions> {
		return { ...requestOptions, headers: { ...requestOptions.headers, Authorization: `Bearer ${String(credentials.apiKey)}` } };
	}

	test: ICredentialTestRequest = {
		request: {
			baseURL: '={{$credentials.baseUrl.replace(/\\/+$/, "")}}',
			url: '/v1/agency',
			method: 'GET',
		},
		rules: [
			{
				type: 'responseCode',
				properties: {
					value: 401,
					message: 'No API key reached the service (HTTP 401). Paste the key from Integrations into API Key.',
				},
			},
			{
				type: 'responseCode',
				properties: {
					value: 403,
					message:
						'The service rejected this API key (HTTP 403: invalid key). Create a new key under Integrations and paste it into API Key.',
				},
			},
			{
				type: 'responseCode',
				properties: {
					value: 429,
					message:
						'The key works, but its request budget is spent for now (HTTP 429). Wait a minute and test again; if it persists, lower Requests per Minute to what the service allows you.',
				},
			},
			{
				type: 'responseCode',
				properties: {
					value: 404,
					message:
						'Nothing answers at this Base URL (HTTP 404). It must be the API host followed by /service, for example https://api.example.com/service.',
				},
			},
		],
	};
}
