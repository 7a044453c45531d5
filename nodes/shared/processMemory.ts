/**
 * The one owner of what the nodes keep in an n8n process between calls. Every such store is made here
 * (`processStore`): its entries are keyed by what they belong to (`Owner`), it is bounded in entries,
 * and each entry has a lifetime:
 * - released when its node's workflow is deactivated, in the process where n8n calls the webhook
 *   trigger's delete() (`releaseNode`): the one that activated it, the main process in queue mode;
 * - let go a stated time after its last use (or after it was written) where n8n says nothing: polling
 *   nodes get no deactivation call, and in queue mode the workers and webhook processes get none.
 *   Node code has no timers: what has expired is let go when any store is next used.
 * `resetProcessMemory` empties every store at once (tests).
 *
 * The stores, each stated where it is made: signing keys (signingSecret.ts), accepted delivery ids and
 * claims and the listening sessions at the Test URL (onceOnly/triggerMemory.ts, onceOnly/listeningSessions.ts), each polling node's last hand-over
 * (guardedPoll.ts), run order (runOrder.ts), request budgets (transport.ts), parameters the service
 * refused (serviceClient.ts). `processMemoryStores()` lists them with their entries.
 */
import type { INode, WorkflowExecuteMode } from 'n8n-workflow';

/**
 * Which of a webhook trigger's two URLs an entry belongs to. n8n runs the Test URL, the editor's
 * manual runs and Fetch Test Event in 'manual' mode; everything else is production.
 */
export type Url = 'test' | 'production';

/** A node of a workflow, at one of its URLs: what a trigger keeps for itself. */
export interface NodeOwner {
	workflow: string;
	node: string;
	url: Url;
}

/**
 * What an entry belongs to: a node (at one URL); an API key at one service (`budgetKeyFor`: shared by
 * every workflow, node and URL that uses it, because the service counts its requests together); or
 * one n8n execution (a run outlives its workflow's deactivation).
 */
export type Owner = NodeOwner | { apiKey: string } | { execution: string };

/** The parts of any n8n function context that say which node, workflow and mode it runs for. */
export interface NodeContext {
	getWorkflow(): { id?: string | null };
	getNode(): Pick<INode, 'id'>;
	getMode(): WorkflowExecuteMode;
}

export function urlOf(mode: WorkflowExecuteMode): Url {
	return mode === 'manual' ? 'test' : 'production';
}

/** The node a context runs for, at the URL its mode says. */
export function nodeOwnerOf(context: NodeContext): NodeOwner {
	return { workflow: String(context.getWorkflow().id ?? ''), node: context.getNode().id, url: urlOf(context.getMode()) };
}

const nodePrefix = (workflow: string, node: string) => `node ${workflow}/${node} `;

function ownerKey(owner: Owner): string {
	if ('apiKey' in owner) return `apiKey ${owner.apiKey}`;
	if ('execution' in owner) return `execution ${owner.execution}`;
	return `${nodePrefix(owner.workflow, owner.node)}${owner.url}`;
}

/** Test-only timing: tests and benchmarks move the clock; n8n never changes it. */
export const processMemoryTiming = {
	now: (): number => Date.now(),
	/** How often the stores are swept for expired entries (each read checks its own entry anyway). */
	sweepEveryMs: 60_000,
};

export interface StoreRules<Value> {
	/** What the store holds. */
	name: string;
	/** What its entries are keyed by, in words. */
	belongsTo: string;
	/** Its lifetime, in words (as the documentation states it). */
	lifetime: string;
	/** How long an entry is kept after it was written, or after its last use when `renewedOnUse`. */
	keptMs: number | ((value: Value) => number);
	renewedOnUse: boolean;
	/** Most entries; past it the least recently used entry that is not in use goes first. */
	maxEntries: number;
	/** An entry in use (a request waiting for its budget, a poll running) is not let go by time or bound. */
	inUse?: (value: Value, nowMs: number) => boolean;
}

interface Entry<Value> {
	value: Value;
	owner: string;
	expiresAtMs: number;
}

/** One store: a map kept in order of last use, so the least recently used entries come first. */
export class ProcessStore<Value> {
	private readonly entries = new Map<string, Entry<Value>>();

	constructor(readonly rules: StoreRules<Value>) {}

	get size(): number {
		return this.entries.size;
	}

	/** The entry's value, or undefined when there is none or it has expired; a use renews it where the rules say so. */
	get(owner: Owner, detail = ''): Value | undefined {
		const nowMs = processMemoryTiming.now();
		sweepStores(nowMs);
		const key = `${ownerKey(owner)}\n${detail}`;
		const entry = this.entries.get(key);
		if (!entry) return undefined;
		if (this.hasExpired(entry, nowMs)) {
			this.entries.delete(key);
			return undefined;
		}
		this.entries.delete(key);
		this.entries.set(key, entry);
		if (this.rules.renewedOnUse) entry.expiresAtMs = nowMs + this.keptMsOf(entry.value);
		return entry.value;
	}

	/** Keeps `value` for the owner, from now on for the store's lifetime. */
	set(owner: Owner, value: Value, detail = ''): Value {
		const nowMs = processMemoryTiming.now();
		sweepStores(nowMs);
		const key = `${ownerKey(owner)}\n${detail}`;
		this.entries.delete(key);
		this.entries.set(key, { value, owner: ownerKey(owner), expiresAtMs: nowMs + this.keptMsOf(value) });
		this.keepWithinBound(nowMs);
		return value;
	}

	/** The entry's value, made with `create` when there is none. */
	obtain(owner: Owner, create: () => Value, detail = ''): Value {
		return this.get(owner, detail) ?? this.set(owner, create(), detail);
	}

	delete(owner: Owner, detail = ''): void {
		this.entries.delete(`${ownerKey(owner)}\n${detail}`);
	}

	/** Lets go of every entry of the node (at one URL, or at both when none is given); one in use goes once it is not. */
	releaseNode(workflow: string, node: string, url?: Url): void {
		const prefix = nodePrefix(workflow, node);
		const nowMs = processMemoryTiming.now();
		for (const [key, entry] of this.entries) {
			if (url === undefined ? !entry.owner.startsWith(prefix) : entry.owner !== `${prefix}${url}`) continue;
			if (this.inUse(entry, nowMs)) entry.expiresAtMs = nowMs;
			else this.entries.delete(key);
		}
	}

	/** Lets go of every expired entry. */
	sweep(nowMs: number): void {
		for (const [key, entry] of this.entries) if (this.hasExpired(entry, nowMs)) this.entries.delete(key);
	}

	clear(): void {
		this.entries.clear();
	}

	private keptMsOf(value: Value): number {
		return typeof this.rules.keptMs === 'function' ? this.rules.keptMs(value) : this.rules.keptMs;
	}

	private inUse(entry: Entry<Value>, nowMs: number): boolean {
		return this.rules.inUse?.(entry.value, nowMs) ?? false;
	}

	private hasExpired(entry: Entry<Value>, nowMs: number): boolean {
		return entry.expiresAtMs <= nowMs && !this.inUse(entry, nowMs);
	}

	private keepWithinBound(nowMs: number): void {
		// Checked first: iterating a map that had many deletions walks past their holes.
		if (this.entries.size <= this.rules.maxEntries) return;
		for (const [key, entry] of this.entries) {
			if (this.entries.size <= this.rules.maxEntries) return;
			if (!this.inUse(entry, nowMs)) this.entries.delete(key);
		}
	}
}

/** Every store of the process, and when they were last swept. */
const memory = { stores: [] as Array<ProcessStore<never>>, sweptAtMs: 0 };

function sweepStores(nowMs: number): void {
	if (nowMs - memory.sweptAtMs < processMemoryTiming.sweepEveryMs) return;
	memory.sweptAtMs = nowMs;
	for (const store of memory.stores) store.sweep(nowMs);
}

/** Makes a store of the process: the only way node code keeps anything between calls. */
export function processStore<Value>(rules: StoreRules<Value>): ProcessStore<Value> {
	const store = new ProcessStore(rules);
	memory.stores.push(store as unknown as ProcessStore<never>);
	return store;
}

/** When a webhook trigger's workflow is deactivated: lets go of everything kept for the node, in every store. */
export function releaseNode(owner: Omit<NodeOwner, 'url'> & { url?: Url }): void {
	for (const store of memory.stores) store.releaseNode(owner.workflow, owner.node, owner.url);
}

/** Every store with its rules and how many entries it holds now. */
export function processMemoryStores(): Array<Pick<StoreRules<unknown>, 'name' | 'belongsTo' | 'lifetime' | 'maxEntries'> & { entries: number }> {
	sweepStores(processMemoryTiming.now());
	return memory.stores.map(({ rules, size }) => ({ name: rules.name, belongsTo: rules.belongsTo, lifetime: rules.lifetime, maxEntries: rules.maxEntries, entries: size }));
}

/** Only for tests: empties every store, so no test sees what another one left. */
export function resetProcessMemory(): void {
	for (const store of memory.stores) store.clear();
	memory.sweptAtMs = 0;
}
