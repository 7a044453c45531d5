/**
 * n8n's deduplication store for engine-level tests: what n8n-core's DataDeduplicationService hands to
 * nodes, kept in memory with the behaviour of n8n's database-backed one (packages/cli deduplication
 * helper, mode "entries"): one row per workflow and node, read and then written back whole, without a
 * lock, so records made at the same moment can overwrite each other.
 */
import { createHash } from 'node:crypto';

import { DataDeduplicationService } from 'n8n-core';
import type { DeduplicationItemTypes, DeduplicationScope, ICheckProcessedContextData, ICheckProcessedOptions, IDataDeduplicator, IDeduplicationOutput } from 'n8n-workflow';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

export class InMemoryDeduplicationStore implements IDataDeduplicator {
	readonly rows = new Map<string, string[]>();

	private rowKey(scope: DeduplicationScope, context: ICheckProcessedContextData): string {
		return `${context.workflow.id}|${scope === 'node' ? `n:${context.node?.id}` : ''}`;
	}

	/** Hashes as n8n stores them. */
	static hash(value: DeduplicationItemTypes): string {
		return createHash('md5').update(value.toString()).digest('base64');
	}

	/** Records `values` directly, as a run in another process would have. */
	record(scope: DeduplicationScope, context: ICheckProcessedContextData, values: string[]): void {
		const key = this.rowKey(scope, context);
		this.rows.set(key, [...(this.rows.get(key) ?? []), ...values.map(InMemoryDeduplicationStore.hash)]);
	}

	async checkProcessedAndRecord(items: DeduplicationItemTypes[], scope: DeduplicationScope, context: ICheckProcessedContextData, options: ICheckProcessedOptions): Promise<IDeduplicationOutput> {
		const key = this.rowKey(scope, context);
		const read = [...(this.rows.get(key) ?? [])];
		await nextTurn();
		const output: IDeduplicationOutput = { new: [], processed: [] };
		for (const item of items) {
			const hash = InMemoryDeduplicationStore.hash(item);
			if (read.includes(hash)) output.processed.push(item);
			else {
				output.new.push(item);
				read.push(hash);
			}
		}
		if (options.maxEntries) read.splice(0, read.length - options.maxEntries);
		this.rows.set(key, read);
		return output;
	}

	async removeProcessed(items: DeduplicationItemTypes[], scope: DeduplicationScope, context: ICheckProcessedContextData): Promise<void> {
		const key = this.rowKey(scope, context);
		const read = this.rows.get(key);
		if (!read) return;
		const kept = [...read];
		await nextTurn();
		for (const item of items) {
			const index = kept.indexOf(InMemoryDeduplicationStore.hash(item));
			if (index !== -1) kept.splice(index, 1);
		}
		this.rows.set(key, kept);
	}

	/** Whether the node's row holds any of `values` (scope node). */
	holdsAny(workflow: ICheckProcessedContextData['workflow'], node: ICheckProcessedContextData['node'], values: string[]): boolean {
		const row = this.rows.get(this.rowKey('node', { workflow, node }));
		return !!row && values.some((value) => row.includes(InMemoryDeduplicationStore.hash(value)));
	}

	async clearAllProcessedItems(scope: DeduplicationScope, context: ICheckProcessedContextData): Promise<void> {
		this.rows.delete(this.rowKey(scope, context));
	}

	async getProcessedDataCount(scope: DeduplicationScope, context: ICheckProcessedContextData): Promise<number> {
		return this.rows.get(this.rowKey(scope, context))?.length ?? 0;
	}
}

let store: InMemoryDeduplicationStore | undefined;

/** The store every engine-level run of this test file uses (n8n-core holds one per process). */
export function deduplicationStore(): InMemoryDeduplicationStore {
	if (!store) {
		store = new InMemoryDeduplicationStore();
		void DataDeduplicationService.init(store);
	}
	return store;
}
