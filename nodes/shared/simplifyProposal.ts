import type { IDataObject } from 'n8n-workflow';

function objectAt(record: IDataObject, key: string): IDataObject {
	const value = record?.[key];
	return value && typeof value === 'object' && !Array.isArray(value) ? (value as IDataObject) : {};
}

function valueOrNull<T>(value: T | undefined): T | null {
	return value === undefined ? null : value;
}

/** The newest entry of proposal.results (by timeStamp), or null when there is none. */
export function latestResultEvent(results: unknown): { type: string; timeStamp: string } | null {
	if (!Array.isArray(results)) return null;
	let latest: { type: string; timeStamp: string } | null = null;
	for (const result of results as Array<{ type?: string; timeStamp?: string }>) {
		if (typeof result?.timeStamp !== 'string') continue;
		if (!latest || Date.parse(result.timeStamp) >= Date.parse(latest.timeStamp)) {
			latest = { type: String(result.type ?? ''), timeStamp: result.timeStamp };
		}
	}
	return latest;
}

/**
 * A proposal record as a flat CRM row: who applied to which job, for how much, with which client,
 * and where it stands. Missing parts become null (the spec does not say which may be absent).
 */
export function simplifyProposal(record: IDataObject): IDataObject {
	const proposal = objectAt(record, 'proposal');
	const job = objectAt(record, 'job');
	const client = objectAt(record, 'client');
	const freelancer = objectAt(record, 'freelancer');
	const latest = latestResultEvent(proposal.results);
	return {
		uid: valueOrNull(proposal.uid),
		status: valueOrNull(proposal.status),
		createdAt: valueOrNull(proposal.createdAt),
		updatedAt: valueOrNull(proposal.updatedAt),
		jobTitle: valueOrNull(job.title),
		jobUrl: valueOrNull(job.url),
		jobBudgetType: valueOrNull(job.budgetType),
		jobFixedPrice: valueOrNull(job.price),
		jobMinHourlyRate: valueOrNull(job.minHourlyRate),
		jobMaxHourlyRate: valueOrNull(job.maxHourlyRate),
		clientCountry: valueOrNull(client.country),
		clientTotalSpent: valueOrNull(client.totalSpent),
		freelancerUid: valueOrNull(freelancer.uid),
		freelancerName: valueOrNull(freelancer.name),
		latestResult: latest?.type ?? null,
		latestResultAt: latest?.timeStamp ?? null,
		chatRoomId: valueOrNull(proposal.chatRoomId),
	};
}
