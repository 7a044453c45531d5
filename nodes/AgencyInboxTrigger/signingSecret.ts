import type { ICredentialDataDecryptedObject, WorkflowExecuteMode } from 'n8n-workflow';

import { decodeSigningSecret } from './verifySignature';

export interface SigningSecretSetting {
	/** Credential field that holds the secret for the URL in use. */
	field: 'webhookSigningSecret' | 'testWebhookSigningSecret';
	/** How the credential form labels it. */
	label: string;
	/** Which of the node's two URLs the secret belongs to. */
	url: 'Production URL' | 'Test URL';
}

/** n8n runs the Test URL in 'manual' mode; its endpoint in the service has its own secret. */
export function signingSecretSetting(mode: WorkflowExecuteMode): SigningSecretSetting {
	return mode === 'manual'
		? { field: 'testWebhookSigningSecret', label: 'Test Webhook Signing Secret', url: 'Test URL' }
		: { field: 'webhookSigningSecret', label: 'Webhook Signing Secret', url: 'Production URL' };
}

export type SigningKey = { key: Buffer } | { problem: string };

/** The key to verify with, or what the user must set; never the secret itself. */
export function signingKeyFor(credentials: ICredentialDataDecryptedObject, mode: WorkflowExecuteMode): SigningKey {
	const setting = signingSecretSetting(mode);
	const secret = credentials[setting.field];
	if (typeof secret !== 'string' || secret.trim() === '') {
		return {
			problem:
				`No ${setting.label} is set in the Agency Inbox API credential. Register this trigger's ${setting.url} ` +
				`as a webhook endpoint in the service's dashboard and paste that endpoint's signing secret into ${setting.label}, ` +
				"or turn off 'Verify Signatures' in the node's options.",
		};
	}
	const key = decodeSigningSecret(secret);
	if (!key) {
		return {
			problem: `The ${setting.label} in the Agency Inbox API credential is not a signing secret: it must be whsec_ followed by base64, as the service's dashboard shows it.`,
		};
	}
	return { key };
}
