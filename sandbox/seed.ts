/** Deterministic seed data: the same seed always yields the same agency, members, proposals, rooms and bids. */
import { Random } from './random';
import type {
	BidIntent,
	ChatRoom,
	InvitationRecord,
	Member,
	Participant,
	ProposalRecord,
	ProposalResult,
	ResultType,
	SandboxState,
	Story,
	User,
} from './types';

/** Seeded history ends here; changes made at run time are later (see MonotonicClock). */
export const SEED_HISTORY_END_MS = Date.parse('2026-06-01T00:00:00.000Z');
const DAY_MS = 86_400_000;
const SEED_HISTORY_DAYS = 240;
/** The first seeded room is created here. */
export const SEED_HISTORY_START_MS = SEED_HISTORY_END_MS - SEED_HISTORY_DAYS * DAY_MS;

const MEMBER_COUNT = 12;
/** Rooms seeded unless `startSandbox({rooms})` says otherwise. */
export const DEFAULT_ROOM_COUNT = 60;
const INVITATION_COUNT = 45;
const BID_INTENT_COUNT = 30;

const FIRST_NAMES = ['Ana', 'Bruno', 'Chen', 'Dara', 'Emeka', 'Farah', 'Goran', 'Hana', 'Ivan', 'Julia', 'Kofi', 'Lena'];
const LAST_NAMES = ['Silva', 'Novak', 'Wei', 'Okafor', 'Haddad', 'Petrov', 'Kowalska', 'Mensah', 'Ibrahim', 'Tanaka'];
const COUNTRIES = ['US', 'GB', 'DE', 'CA', 'AU', 'NL', 'FR', 'SE', 'AE', 'SG'];
const CITIES = ['New York', 'London', 'Berlin', 'Toronto', 'Sydney', 'Amsterdam', 'Paris', 'Stockholm', 'Dubai', 'Singapore'];
const TIMEZONES = ['America/New_York', 'Europe/London', 'Europe/Berlin', 'America/Toronto', 'Australia/Sydney', 'Europe/Amsterdam', 'Europe/Paris', 'Europe/Stockholm', 'Asia/Dubai', 'Asia/Singapore'];
const SKILLS = ['TypeScript', 'React', 'Node.js', 'Python', 'n8n', 'Automation', 'API Integration', 'PostgreSQL', 'AWS', 'Figma', 'Copywriting', 'SEO'];
const JOB_TOPICS = ['CRM automation', 'Shopify store migration', 'Data pipeline', 'Landing page redesign', 'Chatbot integration', 'Invoice workflow', 'Lead scraping tool', 'Mobile app MVP', 'Slack bot', 'Analytics dashboard'];
const INDUSTRIES = ['Tech & IT', 'Retail', 'Finance', 'Healthcare', 'Education', 'Marketing'];
const CLIENT_LINES = ['Thanks for the proposal, can we talk tomorrow?', 'What would the timeline look like?', 'Could you share similar work?', 'Is the price negotiable?', 'We would like to move forward.', 'Can you start this week?'];
export const MEMBER_LINES = ['Happy to help, here is my availability.', 'Sure, I can share a few case studies.', 'The timeline is about two weeks.', 'Sounds good, let us schedule a call.', 'Thanks, I will send the details shortly.'];

export const pad = (value: number, width: number): string => String(value).padStart(width, '0');
export const proposalId = (n: number): string => `prop-${pad(n, 4)}`;
export const storyId = (n: number): string => `story-${pad(n, 5)}`;
export const bidIntentId = (n: number): string => `bid-${pad(n, 3)}`;
const roomIdOf = (n: number): string => `room-${pad(n, 3)}`;
const iso = (ms: number): string => new Date(ms).toISOString();

export function memberAsUser(member: Member): User {
	return { id: member.uid, nid: `nid-${member.uid}`, rid: `rid-${member.uid}`, name: member.name, photoUrl: photoUrl(member.uid) };
}

export function photoUrl(userId: string): string {
	return `https://example.invalid/photos/${userId}.png`;
}

const AGENCY_ORGANIZATION = { id: 'org-agency', name: 'Northwind Digital Agency', type: 'BUSINESS', photoUrl: null };

/** An agency member as a room participant. */
export function memberParticipant(member: Member): Participant {
	return { user: memberAsUser(member), organization: { ...AGENCY_ORGANIZATION }, role: 'freelancer' };
}

function buildMembers(rng: Random): Member[] {
	return Array.from({ length: MEMBER_COUNT }, (_, i) => {
		const uid = `mem-${pad(i + 1, 3)}`;
		const skills = [rng.pick(SKILLS), rng.pick(SKILLS), rng.pick(SKILLS)].filter((s, k, all) => all.indexOf(s) === k);
		const title = `${skills[0]} specialist`;
		return {
			uid,
			ciphertext: `~01${rng.hex(16)}`,
			name: `${FIRST_NAMES[i % FIRST_NAMES.length]} ${rng.pick(LAST_NAMES)}`,
			// Every third member manages the business, so both roles are present.
			role: i % 3 === 0 ? 'business_manager' : 'member',
			countryCode: rng.pick(COUNTRIES),
			certificates: rng.chance(0.5) ? [`cert-${rng.hex(6)}`] : [],
			generalProfile: { title, description: `${title} with ${rng.int(2, 12)} years of experience.`, hourlyRate: rng.int(25, 120), skills },
			specializedProfiles: rng.chance(0.6)
				? [{ title: `${skills[skills.length - 1]} expert`, description: 'Specialised profile.', hourlyRate: rng.int(40, 150), skills: [skills[skills.length - 1]] }]
				: [],
		};
	});
}

interface ClientSeed {
	user: User;
	organization: { id: string; name: string; type: string; photoUrl: string | null };
	country: number;
}

/** Fewer clients than rooms (a client has one room per job); every eighth client shares a name with another. */
const CLIENT_COUNT = 24;

/** Client `number` and their organization; `name` lets two clients share a name. */
function buildClient(rng: Random, number: number, name = `${rng.pick(FIRST_NAMES)} ${rng.pick(LAST_NAMES)}`): ClientSeed {
	const id = `client-${pad(number, 3)}`;
	return {
		user: { id, nid: null, rid: null, name, photoUrl: photoUrl(id) },
		organization: { id: `org-${pad(number, 3)}`, name: `${name.split(' ')[1]} ${rng.pick(['Labs', 'Studio', 'GmbH', 'Inc', 'Ltd'])}`, type: rng.chance(0.7) ? 'BUSINESS' : 'SOLE_PROPRIETOR', photoUrl: null },
		country: rng.int(0, COUNTRIES.length - 1),
	};
}

function buildClients(rng: Random): ClientSeed[] {
	const clients: ClientSeed[] = [];
	for (let k = 1; k <= CLIENT_COUNT; k++) clients.push(buildClient(rng, k, k % 8 === 0 ? (clients[k - 8].user.name as string) : undefined));
	return clients;
}

/** What a room is about, decided before proposals link to it. */
interface RoomPlan {
	roomId: string;
	client: ClientSeed;
	topic: string;
}

function planRooms(rng: Random, clients: ClientSeed[], roomCount: number): RoomPlan[] {
	return Array.from({ length: roomCount }, (_, i) => ({ roomId: roomIdOf(i + 1), client: clients[i % clients.length], topic: rng.pick(JOB_TOPICS) }));
}

interface RoomSeed {
	room: ChatRoom;
	stories: Story[];
	client: ClientSeed;
}

/**
 * Rooms as the spec leaves them open: the client's name as the room name (repeated across a client's
 * rooms and between clients of the same name), the agency members of every proposal linked to the
 * room (often several), sometimes an unauthorized member too, and an owner that is the client, null
 * or one of the agency members, in turn.
 */
function buildRooms(rng: Random, plans: RoomPlan[], proposals: ProposalRecord[], members: Member[], unauthorized: string[], nextStoryId: () => string): RoomSeed[] {
	const linkedTo = new Map<string, ProposalRecord[]>();
	for (const record of proposals) if (record.proposal.chatRoomId !== null) linkedTo.set(record.proposal.chatRoomId, [...(linkedTo.get(record.proposal.chatRoomId) ?? []), record]);
	// Rooms 3 days apart (60 rooms over 180 days); more rooms closer together, within the same 180 days.
	const spacingDays = Math.min(3, 180 / plans.length);
	return plans.map((plan, i) => {
		const { roomId, client, topic } = plan;
		const linked = linkedTo.get(roomId) ?? [];
		const roomMembers = members.filter((m) => linked.some((p) => p.freelancer.uid === m.uid));
		if (roomMembers.length === 0) roomMembers.push(members[i % (members.length - unauthorized.length)]);
		if (i % 10 === 2) roomMembers.push(...members.filter((m) => unauthorized.includes(m.uid) && !roomMembers.includes(m)));
		const memberParticipants = roomMembers.map(memberParticipant);
		const createdMs = SEED_HISTORY_END_MS - Math.round((SEED_HISTORY_DAYS - i * spacingDays) * DAY_MS);
		const stories: Story[] = [];
		const storyCount = rng.int(3, 12);
		let t = createdMs;
		for (let s = 0; s < storyCount; s++) {
			t += rng.int(10, 3000) * 60_000;
			// Odd rooms end with a client message, so clientMessageOnly has both kinds to tell apart.
			const fromClient = (storyCount - 1 - s) % 2 === (i % 2 === 1 ? 0 : 1);
			const author = fromClient ? client.user : memberAsUser(rng.pick(roomMembers));
			stories.push({
				storyId: nextStoryId(),
				userId: author.id,
				userName: author.name ?? '',
				userPhotoUrl: author.photoUrl ?? '',
				message: fromClient ? rng.pick(CLIENT_LINES) : rng.pick(MEMBER_LINES),
				createdAt: iso(Math.min(t, SEED_HISTORY_END_MS - 1000)),
				attachments: rng.chance(0.1) ? [{ objectReferenceId: `file-${rng.hex(8)}`, objectType: 'FILE', metadata: [{ key: 'fileName', value: 'brief.pdf' }] }] : [],
			});
		}
		const first = linked[0];
		// An agency owner other than the freelancer of the room's first proposal, when the room has one.
		const otherMember = [...memberParticipants].reverse().find((p) => p.user.id !== first?.freelancer.uid) ?? memberParticipants[0];
		const opened = openRoom(roomId, client, topic, memberParticipants, createdMs);
		const room: ChatRoom = {
			...opened,
			roomType: i % 7 === 0 ? 'GROUP' : i % 5 === 0 ? 'INTERVIEW' : 'ONE_ON_ONE',
			unreadCount: rng.int(0, 4),
			owner: i % 3 === 0 ? opened.creator : i % 3 === 1 ? null : otherMember,
			vendorProposal: first ? vendorProposalOf(first) : null,
			roomNote: i % 6 === 0 ? 'Follow up next week.' : null,
			roomNotePresent: i % 6 === 0,
			favorite: i % 9 === 0,
			muted: i % 13 === 0,
			storiesCount: stories.length,
		};
		if (i % 8 === 3) {
			const contractId = `contract-${pad(i + 1, 3)}`;
			room.contractId = contractId;
			room.contract = { id: contractId, title: topic, contractType: 'HOURLY', status: 'ACTIVE', createdDateTime: iso(createdMs), startDateTime: iso(createdMs), endDateTime: null };
		}
		applyLastStory(room, stories[stories.length - 1]);
		// Synced when its last message came in.
		room.lastSyncedAt = room.lastStoryAt;
		return { room, stories, client };
	});
}

/** A room's link to the proposal it started from. */
export function vendorProposalOf(record: ProposalRecord): ChatRoom['vendorProposal'] {
	return { id: record.proposal.uid, userId: record.freelancer.uid, marketplaceJobPostingId: record.job.uid };
}

/** A room of `client` as it is opened: no story yet, nothing flagged or noted, the client its creator and owner. */
function openRoom(roomId: string, client: ClientSeed, topic: string, members: Participant[], createdMs: number): ChatRoom {
	const clientParticipant: Participant = { user: client.user, organization: client.organization, role: 'client' };
	return {
		roomId,
		roomName: client.user.name,
		topic,
		roomType: 'ONE_ON_ONE',
		roomUsers: [clientParticipant, ...members],
		lastStory: null,
		unreadCount: 0,
		organization: client.organization,
		creator: clientParticipant,
		owner: clientParticipant,
		vendorProposal: null,
		contract: null,
		contractId: null,
		roomNote: null,
		roomNotePresent: false,
		isPublic: false,
		favorite: false,
		readOnly: false,
		hidden: false,
		muted: false,
		blockDateTime: null,
		blockedBy: null,
		lastStoryId: null,
		lastStoryAt: null,
		lastSyncedAt: iso(createdMs),
		numUsers: 1 + members.length,
		storiesCount: 0,
		createdAtDateTime: iso(createdMs),
	};
}

/** A room opened after seeding by a new client (numbers continue the seed's); the agency joins it through a proposal. */
export function buildNewRoom(rng: Random, roomNumber: number, clientNumber: number, createdMs: number): ChatRoom {
	return openRoom(roomIdOf(roomNumber), buildClient(rng, clientNumber), rng.pick(JOB_TOPICS), [], createdMs);
}

/** Points the room's lastStory fields at `story` (the newest). */
export function applyLastStory(room: ChatRoom, story: Story, author?: User): void {
	const user = author ?? room.roomUsers.find((p) => p.user.id === story.userId)?.user ?? null;
	room.lastStory = { storyId: story.storyId, message: story.message, user, createdDateTime: story.createdAt, updatedDateTime: null, attachments: null };
	room.lastStoryId = story.storyId;
	room.lastStoryAt = story.createdAt;
}

/** The room a proposal's chat lives in (null: no chat yet), its topic, and the client behind it. */
export interface ProposalRoomLink {
	roomId: string | null;
	topic: string | null;
	client: { organization: { id: string }; country: number };
}

export interface ProposalInputs {
	number: number;
	createdMs: number;
	updatedMs: number | null;
	results: ProposalResult[];
	status: string;
	freelancer: Member;
	manager: Member;
	room: ProposalRoomLink;
}

export function buildProposal(rng: Random, input: ProposalInputs): ProposalRecord {
	const uid = proposalId(input.number);
	const topic = input.room.topic ?? rng.pick(JOB_TOPICS);
	const jobUid = `job-${pad(input.number, 4)}`;
	const hourly = rng.chance(0.5);
	const jobCreatedMs = input.createdMs - rng.int(1, 48) * 3_600_000;
	const clientCountry = input.room.client.country;
	const boosted = rng.chance(0.2);
	return {
		proposal: {
			uid,
			createdAt: iso(input.createdMs),
			updatedAt: input.updatedMs === null ? null : iso(input.updatedMs),
			status: input.status,
			results: input.results,
			isBoosted: boosted,
			isBoostOutbid: boosted && rng.chance(0.3),
			boostedConnects: boosted ? rng.int(5, 50) : 0,
			coverLetter: `Hi, we have delivered several ${topic.toLowerCase()} projects and can start right away. — ${input.freelancer.name}`,
			connectsSpent: rng.int(4, 24),
			questions: rng.chance(0.4) ? [{ question: 'Describe your recent experience with similar projects.', answer: 'We shipped three similar projects this year.' }] : [],
			applicationTimeSeconds: Math.round(rng.next() * 600 * 100) / 100,
			attachments: [],
			bidDecisionResult: { shouldApply: true, reasons: ['Skills match', 'Client has verified payment'], prompt: 'Should we apply to this job?' },
			crmOne: { contactId: `c1-${rng.hex(8)}`, dealId: `d1-${rng.hex(8)}`, leadId: `l1-${rng.hex(8)}` },
			crmTwo: { contactId: rng.int(1000, 99999), leadId: `l2-${rng.hex(8)}`, dealId: rng.int(1000, 99999) },
			chatRoomId: input.room.roomId,
		},
		freelancer: { uid: input.freelancer.uid, name: input.freelancer.name },
		manager: { uid: input.manager.uid, name: input.manager.name },
		job: {
			uid: jobUid,
			title: `${topic} (${pad(input.number, 4)})`,
			description: `We need help with ${topic.toLowerCase()}.`,
			url: `https://marketplace.example.invalid/jobs/${jobUid}`,
			cipherText: `~02${rng.hex(18)}`,
			duration: rng.pick(['Less than 1 month', '1 to 3 months', '3 to 6 months']),
			price: hourly ? 0 : rng.int(3, 80) * 100,
			minHourlyRate: hourly ? rng.int(20, 50) : null,
			maxHourlyRate: hourly ? rng.int(55, 120) : null,
			hireType: 'ANY',
			budgetType: hourly ? 'HOURLY' : 'FIXED',
			prefEnglishSkills: 'ANY',
			projectType: rng.pick(['One-time project', 'Ongoing project']),
			skills: [rng.pick(SKILLS), rng.pick(SKILLS)],
			vendorExpLevel: rng.pick(['ENTRY', 'INTERMEDIATE', 'EXPERT']),
			vendorCountries: [],
			category: 'Web, Mobile & Software Dev',
			createdAt: iso(jobCreatedMs),
			publishedAt: iso(jobCreatedMs + 60_000),
			isFeatured: rng.chance(0.1),
			jobScore: rng.int(40, 100),
		},
		client: {
			uid: input.room.client.organization.id,
			country: COUNTRIES[clientCountry],
			city: CITIES[clientCountry],
			companySize: rng.int(1, 500),
			avgHourlyRate: rng.int(15, 90),
			totalSpent: rng.int(0, 250) * 1000,
			industry: rng.pick(INDUSTRIES),
			timezone: TIMEZONES[clientCountry],
			connectedAt: iso(jobCreatedMs - rng.int(30, 900) * DAY_MS),
			totalHires: rng.int(0, 80),
			feedbackCount: rng.int(0, 60),
			feedbackScore: Math.round((3.5 + rng.next() * 1.5) * 100) / 100,
			hireRate: rng.int(0, 100),
			isEnterprise: rng.chance(0.1),
			isPaymentMethodVerified: rng.chance(0.85),
			isPhoneNumberVerified: rng.chance(0.7),
		},
		jobSearch: { id: `search-${(input.number % 5) + 1}`, url: `https://marketplace.example.invalid/search/${(input.number % 5) + 1}`, name: `Saved search ${(input.number % 5) + 1}` },
		invitation: { createdAt: iso(jobCreatedMs + 120_000) },
	};
}

const PROPOSAL_STATUSES = ['SUBMITTED', 'ACTIVE', 'ARCHIVED'];

function buildProposals(rng: Random, count: number, members: Member[], unauthorized: string[], rooms: RoomPlan[]): ProposalRecord[] {
	const authorized = members.filter((m) => !unauthorized.includes(m.uid));
	const managers = members.filter((m) => m.role === 'business_manager');
	const spanMs = SEED_HISTORY_DAYS * DAY_MS;
	const records: ProposalRecord[] = [];
	for (let i = 0; i < count; i++) {
		// Creation ends 10 days before the history's end, leaving room for later result events.
		const createdMs = SEED_HISTORY_END_MS - 10 * DAY_MS - spanMs + Math.floor((spanMs * i) / Math.max(count, 1)) + rng.int(0, 600) * 1000;
		// Proposals that predate the updatedAt field are among the oldest; about 10% overall.
		const predatesUpdatedAt = i < count * 0.4 && rng.chance(0.25);
		const results: ProposalResult[] = [];
		let lastMs = createdMs;
		for (const type of ['VIEWED_BY_CLIENT', 'CLIENT_REPLIED', 'HIRED'] as ResultType[]) {
			if (!rng.chance(type === 'VIEWED_BY_CLIENT' ? 0.6 : 0.45)) break;
			lastMs += rng.int(1, 72) * 3_600_000;
			results.push({ timeStamp: iso(Math.min(lastMs, SEED_HISTORY_END_MS - 1)), type });
		}
		lastMs = Math.min(lastMs, SEED_HISTORY_END_MS - 1);
		const updatedMs = predatesUpdatedAt ? null : lastMs + (results.length === 0 && rng.chance(0.5) ? 0 : rng.int(0, 3600) * 1000);
		const status = results.some((r) => r.type === 'HIRED') ? 'ACTIVE' : i % 11 === 0 ? 'ARCHIVED' : PROPOSAL_STATUSES[0];
		// Proposals are sent by authorized members. Each of the first proposals, one per room, has its room; of
		// the later ones every fourth has no chat room (the client never wrote).
		const freelancer = authorized[i % authorized.length];
		const plan = rooms[i % rooms.length];
		const room: ProposalRoomLink = { roomId: i >= rooms.length && i % 4 === 3 ? null : plan.roomId, topic: plan.topic, client: plan.client };
		records.push(buildProposal(rng, { number: i + 1, createdMs, updatedMs: updatedMs === null ? null : Math.min(updatedMs, SEED_HISTORY_END_MS - 1), results, status, freelancer, manager: managers[i % managers.length], room }));
	}
	shareSomeUpdatedAtValues(records);
	return records;
}

/** Some proposals share an updatedAt with the previous one, so the uid tie-break of the ordering is exercised. */
function shareSomeUpdatedAtValues(records: ProposalRecord[]): void {
	for (let i = 1; i < records.length; i++) {
		const current = records[i].proposal;
		const previous = records[i - 1].proposal;
		if (i % 23 !== 0 || current.updatedAt === null || previous.updatedAt === null) continue;
		const shared = [current.updatedAt, previous.updatedAt, current.createdAt].sort().pop() as string;
		current.updatedAt = shared;
		previous.updatedAt = shared;
	}
}

export type InvitationState = 'pending' | 'accepted' | 'declined';
export const INVITATION_STATES: readonly InvitationState[] = ['pending', 'accepted', 'declined'];

/** How a record shows an invitation state: upper case, and no result while pending. */
export function inviteOutcome(state: InvitationState): { status: string; result: string } {
	return { status: state.toUpperCase(), result: state === 'pending' ? '' : state.toUpperCase() };
}

export interface InvitationInputs {
	number: number;
	state: InvitationState;
	member: Member;
	/** Created at `createdMs` plus up to `spreadSeconds`. */
	createdMs: number;
	spreadSeconds: number;
	topic?: string;
}

export function buildInvitation(rng: Random, input: InvitationInputs): InvitationRecord {
	const { member } = input;
	const jobUid = `job-inv-${pad(input.number, 3)}`;
	const topic = input.topic ?? rng.pick(JOB_TOPICS);
	const country = rng.int(0, COUNTRIES.length - 1);
	return {
		invite: {
			uid: `inv-${pad(input.number, 3)}`,
			createdAt: iso(input.createdMs + rng.int(0, input.spreadSeconds) * 1000),
			...inviteOutcome(input.state),
			letter: `Hello ${member.name.split(' ')[0]}, we would like you to look at our ${topic.toLowerCase()} job.`,
			title: topic,
		},
		freelancer: { uid: member.uid, name: member.name, photoUrl: photoUrl(member.uid) },
		job: { uid: jobUid, title: topic, description: `Invitation to ${topic.toLowerCase()}.`, url: `https://marketplace.example.invalid/jobs/${jobUid}` },
		client: { country: COUNTRIES[country], totalSpent: rng.int(0, 200) * 1000, timezone: TIMEZONES[country] },
	};
}

function buildInvitations(rng: Random, members: Member[]): InvitationRecord[] {
	return Array.from({ length: INVITATION_COUNT }, (_, i) =>
		buildInvitation(rng, {
			number: i + 1,
			state: INVITATION_STATES[i % INVITATION_STATES.length],
			member: members[i % members.length],
			createdMs: SEED_HISTORY_END_MS - (INVITATION_COUNT - i) * DAY_MS,
			spreadSeconds: 3600,
		}),
	);
}

export function buildBidIntent(rng: Random, number: number, status: BidIntent['status'], createdMs: number, members: Member[]): BidIntent {
	return {
		id: bidIntentId(number),
		jobUid: `job-bid-${pad(number, 3)}`,
		freelancerUid: members[number % members.length].uid,
		status,
		scheduledFor: iso(createdMs + rng.int(10, 600) * 60_000),
		createdAt: iso(createdMs),
	};
}

function buildBidIntents(rng: Random, members: Member[]): BidIntent[] {
	const statuses: BidIntent['status'][] = ['scheduled', 'submitted', 'scheduled', 'cancelled'];
	return Array.from({ length: BID_INTENT_COUNT }, (_, i) =>
		buildBidIntent(rng, i + 1, statuses[i % statuses.length], SEED_HISTORY_END_MS - (BID_INTENT_COUNT - i) * DAY_MS, members),
	);
}

export function seedState(seed: number, proposalCount: number, roomCount = DEFAULT_ROOM_COUNT): SandboxState {
	const rng = new Random(seed);
	const members = buildMembers(rng);
	const unauthorizedFreelancers = [members[members.length - 1].uid];
	const plans = planRooms(rng, buildClients(rng), roomCount);
	const proposals = buildProposals(rng, proposalCount, members, unauthorizedFreelancers, plans);
	let storyCounter = 0;
	const rooms = buildRooms(rng, plans, proposals, members, unauthorizedFreelancers, () => storyId(++storyCounter));
	return {
		agency: { uid: 'agency-001', name: 'Northwind Digital Agency', description: 'A remote agency building automations, integrations and web apps.', timezone: 'Europe/Berlin', connectsBalance: 420 + rng.int(0, 200) },
		members,
		unauthorizedFreelancers,
		proposals,
		invitations: buildInvitations(rng, members),
		rooms: rooms.map((r) => r.room),
		stories: Object.fromEntries(rooms.map((r) => [r.room.roomId, r.stories])),
		bidIntents: buildBidIntents(rng, members),
		messages: [],
		crm: [],
		masterInboxActive: true,
		counters: { proposal: proposalCount, story: storyCounter, bidIntent: BID_INTENT_COUNT, room: roomCount, client: CLIENT_COUNT, invitation: INVITATION_COUNT },
	};
}
