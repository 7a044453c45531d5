/** Shapes of the sandbox's in-memory data. Public records follow the service spec exactly. */

export interface User {
	id: string;
	nid: string | null;
	rid: string | null;
	name: string | null;
	photoUrl: string | null;
}

export interface Organization {
	id: string | null;
	name: string | null;
	type: string | null;
	photoUrl: string | null;
}

export interface Participant {
	user: User;
	organization: Organization | null;
	role: string | null;
}

export interface Profile {
	title: string;
	description: string;
	hourlyRate: number;
	skills: string[];
}

export interface Agency {
	uid: string;
	name: string;
	description: string;
	timezone: string;
	connectsBalance: number;
}

export interface Member {
	uid: string;
	ciphertext: string;
	name: string;
	role: 'member' | 'business_manager';
	countryCode: string;
	certificates: string[];
	generalProfile: Profile;
	specializedProfiles: Profile[];
}

export type ResultType = 'VIEWED_BY_CLIENT' | 'CLIENT_REPLIED' | 'HIRED';

export interface ProposalResult {
	timeStamp: string;
	type: ResultType;
}

export interface ProposalRecord {
	proposal: {
		uid: string;
		createdAt: string;
		updatedAt: string | null;
		status: string;
		results: ProposalResult[];
		isBoosted: boolean;
		isBoostOutbid: boolean;
		boostedConnects: number;
		coverLetter: string;
		connectsSpent: number;
		questions: Array<{ question: string; answer: string }>;
		applicationTimeSeconds: number;
		attachments: unknown[];
		bidDecisionResult: { shouldApply: boolean; reasons: string[]; prompt: string };
		crmOne: { contactId: string; dealId: string; leadId: string };
		crmTwo: { contactId: number; leadId: string; dealId: number };
		/** Null for a proposal without a chat room (the spec does not say whether it may be absent or null). */
		chatRoomId: string | null;
	};
	freelancer: { uid: string; name: string };
	manager: { uid: string; name: string };
	job: {
		uid: string;
		title: string;
		description: string;
		url: string;
		cipherText: string;
		duration: string;
		price: number;
		minHourlyRate: number | null;
		maxHourlyRate: number | null;
		hireType: string;
		budgetType: string;
		prefEnglishSkills: string;
		projectType: string;
		skills: string[];
		vendorExpLevel: string;
		vendorCountries: string[];
		category: string;
		createdAt: string;
		publishedAt: string;
		isFeatured: boolean;
		jobScore: number;
	};
	client: {
		uid: string;
		country: string;
		city: string;
		companySize: number;
		avgHourlyRate: number;
		totalSpent: number;
		industry: string;
		timezone: string;
		connectedAt: string;
		totalHires: number;
		feedbackCount: number;
		feedbackScore: number;
		hireRate: number;
		isEnterprise: boolean;
		isPaymentMethodVerified: boolean;
		isPhoneNumberVerified: boolean;
	};
	jobSearch: { id: string; url: string; name: string };
	invitation: { createdAt: string };
}

export interface InvitationRecord {
	invite: { uid: string; createdAt: string; status: string; result: string; letter: string; title: string };
	freelancer: { uid: string; name: string; photoUrl: string };
	job: { uid: string; title: string; description: string; url: string };
	client: { country: string; totalSpent: number; timezone: string };
}

export interface StoryAttachment {
	objectReferenceId: string;
	objectType: string;
	metadata: Array<{ key: string; value: string }>;
}

export interface Story {
	storyId: string;
	userId: string;
	userName: string;
	userPhotoUrl: string;
	message: string;
	createdAt: string;
	attachments: StoryAttachment[];
}

export interface LastStory {
	storyId: string;
	message: string;
	user: User | null;
	createdDateTime: string;
	updatedDateTime: string | null;
	attachments: unknown[] | null;
}

export interface ChatRoom {
	roomId: string;
	roomName: string | null;
	topic: string | null;
	roomType: string | null;
	roomUsers: Participant[];
	lastStory: LastStory | null;
	unreadCount: number;
	organization: Organization | null;
	creator: Participant | null;
	owner: Participant | null;
	vendorProposal: { id: string; userId: string; marketplaceJobPostingId: string } | null;
	contract: {
		id: string | null;
		title: string | null;
		contractType: string | null;
		status: string | null;
		createdDateTime: string | null;
		startDateTime: string | null;
		endDateTime: string | null;
	} | null;
	contractId: string | null;
	roomNote: string | null;
	roomNotePresent: boolean;
	isPublic: boolean;
	favorite: boolean;
	readOnly: boolean;
	hidden: boolean;
	muted: boolean;
	blockDateTime: string | null;
	blockedBy: Participant | null;
	lastStoryId: string | null;
	lastStoryAt: string | null;
	lastSyncedAt: string | null;
	numUsers: number | null;
	storiesCount: number | null;
	createdAtDateTime: string;
}

export type BidIntentStatus = 'scheduled' | 'submitted' | 'cancelled';

/** Bid intents are not described by the spec beyond cancel; this is the sandbox's own shape. */
export interface BidIntent {
	id: string;
	jobUid: string;
	freelancerUid: string;
	status: BidIntentStatus;
	scheduledFor: string;
	createdAt: string;
}

export interface SentMessage extends Omit<Story, 'attachments'> {
	roomId: string;
	freelancerUid: string;
}

export interface SandboxState {
	agency: Agency;
	members: Member[];
	/** Members whose marketplace account is not authorized to send messages (Send Message answers 403). */
	unauthorizedFreelancers: string[];
	proposals: ProposalRecord[];
	invitations: InvitationRecord[];
	rooms: ChatRoom[];
	/** Stories per room id, oldest first. */
	stories: Record<string, Story[]>;
	bidIntents: BidIntent[];
	/** Stories posted through Send Message. */
	messages: SentMessage[];
	crm: unknown[];
	masterInboxActive: boolean;
	/** Counters for ids of records created after seeding. */
	counters: { proposal: number; story: number; bidIntent: number; room: number; client: number; invitation: number };
}
