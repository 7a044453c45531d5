import { busiestMinute, type RequestLogEntry } from '../../sandbox/core';

const at = (seconds: number): RequestLogEntry => ({ method: 'GET', path: '/v1/agency', query: {}, apiKey: 'key-1', status: 200, at: new Date(Date.UTC(2026, 10, 23) + seconds * 1000).toISOString() });

describe('busiestMinute', () => {
	it('counts the most requests inside any 60 s window, in any order', () => {
		expect(busiestMinute([])).toBe(0);
		expect(busiestMinute([at(0), at(59.9), at(60), at(61), at(119.5)])).toBe(4);
		expect(busiestMinute([at(120), at(0), at(60)])).toBe(1);
	});
});
