/**
 * Work a test starts that must not outlive it. Jest does not stop a test that timed out: its async
 * body goes on (a loop of polls, say) into the next test, which then fails for a reason of the first
 * one's. What a test registers here ends when the test ends, passed, failed or timed out
 * (test/helpers/endOfTest.ts runs `endTestScope` after each test). Work made outside a test (in a
 * beforeAll) belongs to its file and is not registered.
 */
type End = () => Promise<void>;

const openInThisTest = new Set<End>();

/** Registers `end` to run when the running test ends; false outside a test (a beforeAll, a benchmark). */
export function endWithTest(end: End): boolean {
	if (typeof expect === 'undefined' || expect.getState().currentTestName === undefined) return false;
	openInThisTest.add(end);
	return true;
}

/**
 * A check for a wait a test body runs: throws once the test that started the wait has ended, so the
 * body of a test that timed out stops at its next wait instead of acting in the next test.
 */
export function throwOnceTestEnded(): () => void {
	let ended = false;
	const test = typeof expect === 'undefined' ? undefined : expect.getState().currentTestName;
	if (!endWithTest(async () => void (ended = true))) return () => {};
	return () => {
		if (ended) throw new Error(`a wait of the test "${test}" after it ended`);
	};
}

/** Ends everything the test that just ended registered. */
export async function endTestScope(): Promise<void> {
	const ends = [...openInThisTest];
	openInThisTest.clear();
	await Promise.allSettled(ends.map((end) => end()));
}
