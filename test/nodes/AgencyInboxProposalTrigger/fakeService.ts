import type {
	ProposalPage,
	ProposalQuery,
	ProposalRecord,
} from '../../../nodes/shared/proposalSweep';

/** A tiny in-memory twin of GET /v1/agency/proposals?updatedSince for unit tests of the pure modules. */
export class FakeProposalService {
	readonly records = new Map<string, ProposalRecord>();

	requests: ProposalQuery[] = [];

	/** Runs before a page is answered (request index from 0): lets a test change data between pages. */
	beforePage?: (index: number) => void;

	private clockMs = Date.parse('2026-01-01T00:00:00.000Z');

	constructor(private readonly pageSize = 2) {}

	now(): string {
		this.clockMs += 1000;
		return new Date(this.clockMs).toISOString();
	}

	create(uid: string, at = this.now()): ProposalRecord {
		const record: ProposalRecord = { proposal: { uid, createdAt: at, updatedAt: at, status: 'SUBMITTED', results: [] } };
		this.records.set(uid, record);
		return record;
	}

	addResult(uid: string, type: string, at = this.now()): void {
		const { proposal } = this.records.get(uid)!;
		proposal.results = [...(proposal.results ?? []), { timeStamp: at, type }];
		proposal.updatedAt = at;
	}

	touch(uid: string, at = this.now()): void {
		this.records.get(uid)!.proposal.updatedAt = at;
	}

	fetchPage = async (query: ProposalQuery): Promise<ProposalPage> => {
		this.beforePage?.(this.requests.length);
		this.requests.push(query);
		let after: { at: string; uid: string } | undefined;
		if (query.pageCursor) {
			const cursor = JSON.parse(query.pageCursor) as { ordering: string; at: string; uid: string };
			if (cursor.ordering !== 'updatedAt') {
				throw Object.assign(new Error('cursor issued for another ordering'), { httpCode: '400' });
			}
			after = cursor;
		}
		const since = query.updatedSince === undefined ? -Infinity : Date.parse(query.updatedSince);
		const position = (record: ProposalRecord) => [Date.parse(record.proposal.updatedAt!), record.proposal.uid] as const;
		const isBefore = (a: readonly [number, string], b: readonly [number, string]) => a[0] > b[0] || (a[0] === b[0] && a[1] > b[1]);
		const rows = [...this.records.values()]
			.filter((record) => record.proposal.updatedAt && Date.parse(record.proposal.updatedAt) >= since)
			.sort((a, b) => (isBefore(position(a), position(b)) ? -1 : 1))
			.filter((record) => !after || isBefore([Date.parse(after.at), after.uid], position(record)));
		const data = structuredClone(rows.slice(0, this.pageSize));
		const last = data[data.length - 1];
		const meta =
			rows.length > this.pageSize
				? { nextCursor: JSON.stringify({ ordering: 'updatedAt', at: last.proposal.updatedAt, uid: last.proposal.uid }) }
				: {};
		return { data, meta };
	};
}
