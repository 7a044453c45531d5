/**
 * Behaviour the spec leaves open, made switchable, so a test can run a node against each reading
 * and catch one that relies on a single reading (see docs/sandbox.md "Variants").
 */
import { BadRequest } from './http';

export interface SandboxVariants {
	/** Which date GET /v1/master-inbox/rooms sorts by (the spec says only "date"). */
	roomSort: 'lastStoryAt' | 'lastClientMessageAt';
	/** Order of GET /rooms/{id}/stories (not stated by the spec). */
	storyOrder: 'newestFirst' | 'oldestFirst';
	/** Order of GET /v1/agency/invitations (not stated by the spec). */
	invitationOrder: 'createdAtDesc' | 'createdAtAsc' | 'scrambled';
}

const VARIANT_VALUES: { [F in keyof SandboxVariants]: ReadonlyArray<SandboxVariants[F]> } = {
	roomSort: ['lastStoryAt', 'lastClientMessageAt'],
	storyOrder: ['newestFirst', 'oldestFirst'],
	invitationOrder: ['createdAtDesc', 'createdAtAsc', 'scrambled'],
};

export const DEFAULT_VARIANTS: SandboxVariants = { roomSort: 'lastStoryAt', storyOrder: 'newestFirst', invitationOrder: 'createdAtDesc' };

/** Every value of every field at least once, the default first: run a test once per entry. */
export const ALL_VARIANTS: SandboxVariants[] = [
	DEFAULT_VARIANTS,
	{ roomSort: 'lastClientMessageAt', storyOrder: 'oldestFirst', invitationOrder: 'createdAtAsc' },
	{ roomSort: 'lastStoryAt', storyOrder: 'oldestFirst', invitationOrder: 'scrambled' },
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
