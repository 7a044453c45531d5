import { RollingWindowBudget, shareOfBudget } from '../../../nodes/shared/requestBudget';

describe('shareOfBudget (Processes Sharing This Key)', () => {
	it('gives one process the whole budget, by default too', () => {
		expect(shareOfBudget(20, 1)).toBe(20);
		expect(shareOfBudget(20, undefined)).toBe(20);
		expect(shareOfBudget(20, 0)).toBe(20);
		expect(shareOfBudget(20, Number.NaN)).toBe(20);
	});

	it('gives each of several processes the floor of an equal share, so together they stay within the limit', () => {
		expect(shareOfBudget(20, 2)).toBe(10);
		expect(shareOfBudget(20, 3)).toBe(6);
		expect(shareOfBudget(600, 4)).toBe(150);
		for (let processes = 1; processes <= 20; processes++) expect(shareOfBudget(20, processes) * processes).toBeLessThanOrEqual(20);
	});

	it('never goes below one request per window, and ignores a fraction of a process', () => {
		expect(shareOfBudget(20, 50)).toBe(1);
		expect(shareOfBudget(20, 2.7)).toBe(10);
	});

	it('caps what one process sends in a window at its share', () => {
		const budget = new RollingWindowBudget({ windowMs: 60_000, marginMs: 0, busyPollMs: 10 });
		const limit = shareOfBudget(20, 2);
		const now = Date.now();
		for (let sent = 0; sent < limit; sent++) {
			expect(budget.waitBeforeNextSlot('key', limit, now)).toBe(0);
			void budget.acquire('key', limit).then((slot) => budget.release(slot));
		}
		expect(budget.waitBeforeNextSlot('key', limit, now)).toBeGreaterThan(0);
	});
});
