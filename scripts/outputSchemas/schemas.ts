/**
 * The one typed source of the nodes' output schemas (zod), following the service's specification.
 * `generate.ts` writes them as JSON Schema into dist/nodes/<Node>/__schema__/v<version>/, where n8n
 * looks for them (`resolveOutputSchemaPath` in n8n-core): `<resource>/<operation>.json` for the action
 * node, `output.json` for the triggers (as n8n's own Webhook node). Tests parse real outputs with them.
 * Objects are strict (every key the service sends is listed); what the spec leaves open is nullable.
 */
import { z } from 'zod/v4';

const dateTime = z.string().describe('ISO-8601 date-time');
const nullableString = z.string().nullable();

const user = z.strictObject({ id: z.string(), nid: nullableString, rid: nullableString, name: nullableString, photoUrl: nullableString });
const organization = z.strictObject({ id: nullableString, name: nullableString, type: nullableString, photoUrl: nullableString });
const participant = z.strictObject({ user, organization: organization.nullable(), role: nullableString });
const keyValue = z.strictObject({ key: z.string(), value: z.string() });

export const agency = z.strictObject({ uid: z.string(), name: z.string(), description: z.string(), timezone: z.string(), connectsBalance: z.number() });

const profile = z.strictObject({ title: z.string(), description: z.string(), hourlyRate: z.number(), skills: z.array(z.string()) });
export const member = z.strictObject({
	uid: z.string(),
	ciphertext: z.string(),
	name: z.string(),
	role: z.string().describe('member or business_manager'),
	countryCode: z.string(),
	certificates: z.array(z.string()),
	generalProfile: profile,
	specializedProfiles: z.array(profile),
});

export const invitation = z.strictObject({
	invite: z.strictObject({ uid: z.string(), createdAt: dateTime, status: z.string(), result: z.string(), letter: z.string(), title: z.string() }),
	freelancer: z.strictObject({ uid: z.string(), name: z.string(), photoUrl: z.string() }),
	job: z.strictObject({ uid: z.string(), title: z.string(), description: z.string(), url: z.string() }),
	client: z.strictObject({ country: z.string(), totalSpent: z.number(), timezone: z.string() }),
});

const uidAndName = z.strictObject({ uid: z.string(), name: z.string() });
export const proposalRecord = z.strictObject({
	proposal: z.strictObject({
		uid: z.string(),
		createdAt: dateTime,
		updatedAt: dateTime.nullable(),
		status: z.string(),
		results: z.array(z.strictObject({ timeStamp: dateTime, type: z.string().describe('VIEWED_BY_CLIENT, CLIENT_REPLIED or HIRED') })),
		isBoosted: z.boolean(),
		isBoostOutbid: z.boolean(),
		boostedConnects: z.number(),
		coverLetter: z.string(),
		connectsSpent: z.number(),
		questions: z.array(z.strictObject({ question: z.string(), answer: z.string() })),
		applicationTimeSeconds: z.number(),
		attachments: z.array(z.unknown()),
		bidDecisionResult: z.strictObject({ shouldApply: z.boolean(), reasons: z.array(z.string()), prompt: z.string() }),
		crmOne: z.strictObject({ contactId: z.string(), dealId: z.string(), leadId: z.string() }).nullable().optional(),
		crmTwo: z.strictObject({ contactId: z.number(), leadId: z.string(), dealId: z.number() }).nullable().optional(),
		chatRoomId: nullableString.optional().describe('null or absent when the proposal has no chat room'),
	}),
	freelancer: uidAndName,
	manager: uidAndName,
	job: z.strictObject({
		uid: z.string(),
		title: z.string(),
		description: z.string(),
		url: z.string(),
		cipherText: z.string(),
		duration: z.string(),
		price: z.number(),
		minHourlyRate: z.number().nullable(),
		maxHourlyRate: z.number().nullable(),
		hireType: z.string(),
		budgetType: z.string(),
		prefEnglishSkills: z.string(),
		projectType: z.string(),
		skills: z.array(z.string()),
		vendorExpLevel: z.string(),
		vendorCountries: z.array(z.string()),
		category: z.string(),
		createdAt: dateTime,
		publishedAt: dateTime,
		isFeatured: z.boolean(),
		jobScore: z.number(),
	}),
	client: z.strictObject({
		uid: z.string(),
		country: z.string(),
		city: z.string(),
		companySize: z.number(),
		avgHourlyRate: z.number(),
		totalSpent: z.number(),
		industry: z.string(),
		timezone: z.string(),
		connectedAt: dateTime,
		totalHires: z.number(),
		feedbackCount: z.number(),
		feedbackScore: z.number(),
		hireRate: z.number(),
		isEnterprise: z.boolean(),
		isPaymentMethodVerified: z.boolean(),
		isPhoneNumberVerified: z.boolean(),
	}),
	jobSearch: z.strictObject({ id: z.string(), url: z.string(), name: z.string() }),
	invitation: z.strictObject({ createdAt: dateTime }).nullable().optional(),
});

/** What Simplify returns instead of the full record (nodes/shared/simplifyProposal.ts). */
export const simplifiedProposal = z.strictObject({
	uid: nullableString,
	status: nullableString,
	createdAt: dateTime.nullable(),
	updatedAt: dateTime.nullable(),
	jobTitle: nullableString,
	jobUrl: nullableString,
	jobBudgetType: nullableString,
	jobFixedPrice: z.number().nullable(),
	jobMinHourlyRate: z.number().nullable(),
	jobMaxHourlyRate: z.number().nullable(),
	clientCountry: nullableString,
	clientTotalSpent: z.number().nullable(),
	freelancerUid: nullableString,
	freelancerName: nullableString,
	latestResult: nullableString,
	latestResultAt: dateTime.nullable(),
	chatRoomId: nullableString,
});

const roomAttachment = z.strictObject({
	objectReferenceId: nullableString,
	objectType: nullableString,
	createdDateTime: dateTime.nullable(),
	author: participant.nullable(),
	metadata: z.array(keyValue).nullable(),
});
export const chatRoom = z.strictObject({
	roomId: z.string(),
	roomName: nullableString,
	topic: nullableString,
	roomType: nullableString.describe('GROUP, INTERVIEW or ONE_ON_ONE'),
	roomUsers: z.array(participant),
	lastStory: z
		.strictObject({ storyId: z.string(), message: z.string(), user: user.nullable(), createdDateTime: dateTime, updatedDateTime: dateTime.nullable(), attachments: z.array(roomAttachment).nullable() })
		.nullable(),
	unreadCount: z.number(),
	organization: organization.nullable(),
	creator: participant.nullable(),
	owner: participant.nullable(),
	vendorProposal: z.strictObject({ id: z.string(), userId: z.string(), marketplaceJobPostingId: z.string() }).nullable(),
	contract: z
		.strictObject({
			id: nullableString,
			title: nullableString,
			contractType: nullableString,
			status: nullableString,
			createdDateTime: dateTime.nullable(),
			startDateTime: dateTime.nullable(),
			endDateTime: dateTime.nullable(),
		})
		.nullable(),
	contractId: nullableString,
	roomNote: nullableString,
	roomNotePresent: z.boolean(),
	isPublic: z.boolean(),
	favorite: z.boolean(),
	readOnly: z.boolean(),
	hidden: z.boolean(),
	muted: z.boolean(),
	blockDateTime: dateTime.nullable(),
	blockedBy: participant.nullable(),
	lastStoryId: nullableString,
	lastStoryAt: dateTime.nullable(),
	lastSyncedAt: dateTime.nullable(),
	numUsers: z.number().nullable(),
	storiesCount: z.number().nullable(),
	createdAtDateTime: dateTime,
});

const sentStoryFields = { storyId: z.string(), userId: z.string(), userName: z.string(), userPhotoUrl: z.string(), message: z.string(), createdAt: dateTime };
export const sentStory = z.strictObject(sentStoryFields);
export const story = z.strictObject({
	...sentStoryFields,
	attachments: z.array(z.strictObject({ objectReferenceId: z.string(), objectType: z.string(), metadata: z.array(keyValue) })),
});

export const cancelResult = z.strictObject({ success: z.boolean() });

const person = z.object({ uid: z.string(), name: z.string(), photoUrl: z.string(), slug: z.string() });
/** What the polling triggers add for Start From (nodes/shared/startFrom.ts). */
function backfillFields(item: string) {
	return {
		backfilled: z.boolean().describe(`true where Start From: A Date handed this ${item} on from before the activation; false where the live polls found it`),
		backfillNotice: z
			.string()
			.optional()
			.describe('what the backfill does not hand on, and why: the date moved and an earlier backfill handed on the rest, or rooms it could not read'),
	};
}

/** The payload keys of the four events, all optional: which are present depends on `event`. */
export const webhookEvent = z.strictObject({
	event: z.string().describe('proposal.accepted, chat.message.sent, bid_intent.scheduled or message.attempt.exhausted'),
	deliveryId: z.string(),
	timestamp: dateTime,
	payload: z.looseObject({
		proposal: z.looseObject({ uid: z.string(), coverLetter: z.string().optional(), status: z.string().optional(), createdAt: dateTime.optional() }).optional(),
		job: z.looseObject({ slug: z.string(), title: z.string(), description: z.string(), createdAt: dateTime }).optional(),
		freelancer: person.optional(),
		manager: person.optional(),
		chat: z.looseObject({ id: z.string() }).optional(),
		message: z.looseObject({ text: z.string() }).optional(),
		jobUid: z.string().optional(),
		bidId: z.string().optional(),
	}),
});

export const proposalTriggerItem = z.strictObject({
	trigger: z.enum(['new', 'updated']),
	resultEvent: nullableString.describe('the newest result event since the last poll, or null for a status change or a new proposal'),
	...proposalRecord.shape,
	...backfillFields('proposal'),
});

const agencyMemberRef = z.strictObject({ uid: z.string().describe("the member's uid (Send Message's Freelancer)"), name: nullableString });

/**
 * A new client message from the Message Trigger: `event`, `timestamp` and `payload` as the webhook
 * trigger's `chat.message.sent` item (so the same next nodes work), then the message, its author and
 * its room (nodes/AgencyInboxMessageTrigger/clientMessageItem.ts).
 */
export const messageTriggerItem = z.strictObject({
	event: z.literal('chat.message.sent'),
	timestamp: z.string().describe("the message's createdAt (ISO-8601 date-time)"),
	payload: z.strictObject({
		proposal: z
			.strictObject({ uid: z.string() })
			.nullable()
			.describe(
				"the room's proposal: the most recently updated of the proposals whose chatRoomId is this room; while the trigger cannot tell (see notice), the one the room's vendorProposal.id names where the service confirms it as this room's; else null",
			),
		message: z.strictObject({ text: z.string() }),
		chat: z.strictObject({ id: z.string().describe('the room id') }),
	}),
	message: z.strictObject({ storyId: z.string(), text: z.string(), createdAt: dateTime, attachments: story.shape.attachments }),
	author: z.strictObject({ id: z.string().describe("the client's user id"), name: nullableString, photoUrl: nullableString }),
	room: z.strictObject({
		id: z.string(),
		name: nullableString,
		topic: nullableString,
		client: nullableString.describe("the room's organization name"),
		proposalUid: nullableString.describe('payload.proposal.uid, or null'),
		proposals: z
			.array(
				z.strictObject({
					uid: z.string(),
					status: nullableString,
					updatedAt: dateTime.nullable(),
					freelancer: agencyMemberRef.nullable().describe("the proposal's freelancer"),
				}),
			)
			.nullable()
			.describe('the proposals whose chatRoomId is this room, most recently updated first (at most 10); null while the trigger does not know them all (see notice)'),
		proposalsComplete: z
			.boolean()
			.describe('whether room.proposals lists every proposal of the room: false past 10, where the trigger dropped older ones to keep its state small, and where room.proposals is null'),
		agencyMembers: z.array(agencyMemberRef).describe('the agency members taking part in the room'),
		replyAs: agencyMemberRef
			.nullable()
			.describe("whom to reply as: the freelancer of payload.proposal where they take part in the room, else the first agency member taking part in the room"),
	}),
	notice: z
		.string()
		.optional()
		.describe("why room.proposals is null (the trigger is still reading the agency's proposals, or could not read them) or payload.proposal is null although the room names a proposal"),
	...backfillFields('message'),
});

/** A new or changed invitation from the Invitation Trigger: why it fired, what the list showed before, the record. */
export const invitationTriggerItem = z.strictObject({
	trigger: z.enum(['new', 'statusChanged']),
	previousStatus: z.string().optional().describe('for statusChanged: the status the list showed before'),
	previousResult: z.string().optional().describe('for statusChanged: the result the list showed before'),
	...invitation.shape,
	...backfillFields('invitation'),
});

/** Where each schema goes: node folder, then the path under __schema__/v<version>/. */
export const OUTPUT_SCHEMAS = {
	AgencyInbox: {
		'agency/get': agency,
		'member/getAll': member,
		'invitation/getAll': invitation,
		'proposal/get': proposalRecord,
		'proposal/getAll': proposalRecord,
		'chatRoom/getAll': chatRoom,
		'message/getAll': story,
		'message/send': sentStory,
		'bidIntent/cancel': cancelResult,
	},
	AgencyInboxTrigger: { output: webhookEvent },
	AgencyInboxProposalTrigger: { output: proposalTriggerItem },
	AgencyInboxMessageTrigger: { output: messageTriggerItem },
	AgencyInboxInvitationTrigger: { output: invitationTriggerItem },
} as const;

/** n8n pads the node's version to three parts: version 1 is v1.0.0. */
export const SCHEMA_VERSION_DIR = 'v1.0.0';

type JsonSchema = { [key: string]: unknown };

/**
 * n8n 2.x's editor reads only `type` (the first one of a list), `properties` and `items`; it shows an
 * `anyOf` as a field of no type. So "X or null" becomes `type: [X, "null"]` for a scalar, and for an
 * object or array its own schema with "May be null." in its description (the zod source, which the
 * tests parse outputs with, keeps null allowed).
 */
function forTheEditor(node: unknown): unknown {
	if (Array.isArray(node)) return node.map(forTheEditor);
	if (typeof node !== 'object' || node === null) return node;
	const schema = Object.fromEntries(Object.entries(node).map(([key, value]) => [key, forTheEditor(value)])) as JsonSchema;
	const variants = schema.anyOf as JsonSchema[] | undefined;
	if (!variants || variants.length !== 2 || !variants.some((variant) => variant.type === 'null')) return schema;
	const { anyOf, ...rest } = schema;
	const other = variants.find((variant) => variant.type !== 'null') as JsonSchema;
	if (other.type === 'object' || other.type === 'array' || other.type === undefined) {
		const note = [other.description ?? rest.description, 'May be null.'].filter(Boolean).join('. ');
		return { ...rest, ...other, description: note };
	}
	return { ...rest, ...other, type: [other.type, 'null'] };
}

export function toJsonSchema(schema: z.ZodType): object {
	return forTheEditor(z.toJSONSchema(schema, { target: 'draft-7', io: 'output', unrepresentable: 'any' })) as object;
}
