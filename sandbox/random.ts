/** A small seeded PRNG (mulberry32) so that seeded data and the simulator are reproducible. */
export class Random {
	private state: number;

	constructor(seed: number) {
		this.state = seed >>> 0;
	}

	next(): number {
		this.state = (this.state + 0x6d2b79f5) >>> 0;
		let t = this.state;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	}

	int(min: number, max: number): number {
		return min + Math.floor(this.next() * (max - min + 1));
	}

	pick<T>(items: readonly T[]): T {
		return items[Math.floor(this.next() * items.length)];
	}

	/** `count` of the items (at most all), in a random order (Fisher-Yates over a copy). */
	sample<T>(items: readonly T[], count: number): T[] {
		const copy = [...items];
		for (let i = copy.length - 1; i > 0; i--) {
			const j = this.int(0, i);
			[copy[i], copy[j]] = [copy[j], copy[i]];
		}
		return copy.slice(0, count);
	}

	chance(probability: number): boolean {
		return this.next() < probability;
	}

	hex(length: number): string {
		let out = '';
		while (out.length < length) out += Math.floor(this.next() * 16).toString(16);
		return out;
	}
}
