/**
 * Waits for an event a test needs (a delivery received, a store entry gone), not for a guess of how
 * long it takes: the limit only ends a wait for what will not happen, generous for a busy machine.
 */
export async function waitFor<T>(probe: () => T | undefined | false | Promise<T | undefined | false>, what = 'the awaited condition', limitMs = 60_000): Promise<T> {
	const deadline = Date.now() + limitMs;
	for (;;) {
		const value = await probe();
		if (value) return value;
		if (Date.now() > deadline) throw new Error(`not seen within ${limitMs / 1000} s: ${what}`);
		await new Promise((resolve) => setTimeout(resolve, 20));
	}
}
