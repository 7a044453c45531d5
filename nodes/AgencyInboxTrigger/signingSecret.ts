import type { ICredentialDataDecryptedObject, IWebhookFunctions, WorkflowExecuteMode } from 'n8n-workflow';

import { nodeOwnerOf, processStore } from '../shared/processMemory';
import { CREDENTIAL_TYPE } from '../shared/transport';
import { decodeSigningSecret, verifySignature, type IncomingHeaders, type VerificationResult } from './verifySignature';

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

/** How long a key read from the credential is used before the credential is read again. */
export const KEY_KEPT_MS = 10_000;

const keptKeys = processStore<Buffer>({
	name: 'signing keys',
	belongsTo: "a webhook trigger node at one of its URLs, and the credential that holds the URL's secret",
	lifetime: '10 s after it was read from the credential; released when the workflow is deactivated',
	keptMs: KEY_KEPT_MS,
	renewedOnUse: false,
	maxEntries: 10_000,
});

/**
 * Verifies a delivery with the signing secret of the URL in use, or says what the user must set.
 * Reading the credential in webhook() makes n8n acquire an expression isolate of its own (its
 * credentials helper resolves expressions in a workflow it builds for that), about a tenth of what a
 * delivery costs n8n 2.x, so the key is kept per trigger node and URL for KEY_KEPT_MS. A signature that
 * does not verify with a kept key is checked again with the credential read anew: a secret just pasted
 * applies at once, and one removed from the credential is still accepted for at most KEY_KEPT_MS.
 */
export async function verifyWithCredential(context: IWebhookFunctions, rawBody: Buffer, headers: IncomingHeaders): Promise<VerificationResult | { problem: string }> {
	const node = nodeOwnerOf(context);
	const credential = context.getNode().credentials?.[CREDENTIAL_TYPE];
	const credentialId = String(credential?.id ?? credential?.name);
	const kept = keptKeys.get(node, credentialId);
	if (kept) {
		const result = verifySignature(kept, rawBody, headers);
		if (result.valid) return result;
	}
	const signingKey = signingKeyFor(await context.getCredentials(CREDENTIAL_TYPE), context.getMode());
	if ('key' in signingKey) keptKeys.set(node, signingKey.key, credentialId);
	else keptKeys.delete(node, credentialId);
	return 'problem' in signingKey ? signingKey : verifySignature(signingKey.key, rawBody, headers);
}
