/**
 * Behaviour the spec leaves open, made switchable, so a test can run a node against each reading
 * and catch one that relies on a single reading (see docs/sandbox.md "Variants").
 */
import { BadRequest } from './http';

export interface SandboxVariants {
	/** Which date GET /v1/master-inbox/rooms sorts by (the spec says only "date"); under `lastSyncedAt` a background sync re-syncs old rooms. */
	roomSort: 'lastStoryAt' | 'lastClientMessageAt' | 'createdAt' | 'lastSyncedAt';
	/** Order of GET /rooms/{id}/stories (not stated by the spec). */
	storyOrder: 'newestFirst' | 'oldestFirst';
	/** Order of GET /v1/agency/invitations (not stated by the spec). */
	invitationOrder: 'createdAtDesc' | 'createdAtAsc' | 'scrambled';
	/** What a room's `vendorProposal` ids are: our proposal uid and member uid, or marketplace-side ids (the spec does not relate them). */
	vendorProposalId: 'proposalUid' | 'marketplaceId';
	/** What happens to a query parameter the spec does not name for the endpoint: honoured as this sandbox always did, ignored, or a 400. */
	unnamedQueryParameters: 'honoured' | 'ignored' | 'rejected';
	/** Under which id a member appears as a marketplace user (room participants, message authors): its member uid or another id. */
	authorIds: 'memberUid' | 'marketplaceUserId';
	/** Precision of the room list's row times (`lastStoryAt`, `lastStory`'s times, `lastSyncedAt`, `createdAtDateTime`); stories keep milliseconds. */
	roomRowTimes: 'milliseconds' | 'seconds';
	/** Whether rooms show their own creation times, or all one (`together`: an import). */
	roomCreation: 'spread' | 'together';
	/**
	 * What a `pageCursor` holds on the lists whose cursor the spec does not describe (every list but the
	 * proposals', whose rule 4 describes a key): the sort key of the last row served, or how many rows were
	 * served. Under `offsets` a row that moves while a client pages shifts the rows after it: one is served
	 * twice, or one is skipped.
	 */
	listCursors: 'keys' | 'offsets';
}

/** Every value of every field, the default first. */
const VARIANT_VALUES: { [F in keyof SandboxVariants]: ReadonlyArray<SandboxVariants[F]> } = {
	roomSort: ['lastStoryAt', 'lastClientMessageAt', 'createdAt', 'lastSyncedAt'],
	storyOrder: ['newestFirst', 'oldestFirst'],
	invitationOrder: ['createdAtDesc', 'createdAtAsc', 'scrambled'],
	vendorProposalId: ['proposalUid', 'marketplaceId'],
	unnamedQueryParameters: ['honoured', 'ignored', 'rejected'],
	authorIds: ['memberUid', 'marketplaceUserId'],
	roomRowTimes: ['milliseconds', 'seconds'],
	roomCreation: ['spread', 'together'],
	listCursors: ['keys', 'offsets'],
};

export const DEFAULT_VARIANTS: SandboxVariants = {
	roomSort: 'lastStoryAt',
	storyOrder: 'newestFirst',
	invitationOrder: 'createdAtDesc',
	vendorProposalId: 'proposalUid',
	unnamedQueryParameters: 'honoured',
	authorIds: 'memberUid',
	roomRowTimes: 'milliseconds',
	roomCreation: 'spread',
	listCursors: 'keys',
};

/** Every value of every field at least once, the default first: run a test once per entry (readings combined). */
export const ALL_VARIANTS: SandboxVariants[] = [
	DEFAULT_VARIANTS,
	{ roomSort: 'lastClientMessageAt', storyOrder: 'oldestFirst', invitationOrder: 'createdAtAsc', vendorProposalId: 'marketplaceId', unnamedQueryParameters: 'ignored', authorIds: 'marketplaceUserId', roomRowTimes: 'seconds', roomCreation: 'spread', listCursors: 'offsets' },
	{ roomSort: 'createdAt', storyOrder: 'oldestFirst', invitationOrder: 'scrambled', vendorProposalId: 'marketplaceId', unnamedQueryParameters: 'rejected', authorIds: 'marketplaceUserId', roomRowTimes: 'seconds', roomCreation: 'together', listCursors: 'keys' },
	{ roomSort: 'lastSyncedAt', storyOrder: 'oldestFirst', invitationOrder: 'scrambled', vendorProposalId: 'marketplaceId', unnamedQueryParameters: 'rejected', authorIds: 'marketplaceUserId', roomRowTimes: 'milliseconds', roomCreation: 'together', listCursors: 'offsets' },
];

export interface SingleReading {
	/** 'default', or the one field that differs from it, e.g. 'roomSort=createdAt'. */
	label: string;
	variants: SandboxVariants;
}

/** The default, then each non-default value alone on top of it: run a test once per entry to see which reading it fails under. */
export const SINGLE_READINGS: SingleReading[] = [
	{ label: 'default', variants: DEFAULT_VARIANTS },
	...Object.entries(VARIANT_VALUES).flatMap(([field, values]) =>
		values.slice(1).map((value) => ({ label: `${field}=${value}`, variants: { ...DEFAULT_VARIANTS, [field]: value } })),
	),
];

/** Checks a partial set of variants from outside (a control request, an option, an env value); throws BadRequest. */
export function checkVariants(input: object): Partial<SandboxVariants> {
	for (const [field, value] of Object.entries(input)) {
		if (!Object.hasOwn(VARIANT_VALUES, field)) throw new BadRequest(`Unknown variant "${field}"; the variants are ${Object.keys(VARIANT_VALUES).join(', ')}.`);
		const allowed: readonly unknown[] = VARIANT_VALUES[field as keyof SandboxVariants];
		if (!allowed.includes(value)) throw new BadRequest(`${field} must be one of ${allowed.join(', ')} (got ${JSON.stringify(value)}).`);
	}
	return input as Partial<SandboxVariants>;
}
