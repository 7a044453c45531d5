/** The webhook benchmarks' load, from the environment: BENCH_DELIVERIES, BENCH_CONCURRENCY, BENCH_ROUNDS, BENCH_ALONE_RUNS. */
export function loadSettings(defaults: { deliveriesPerRound: number; aloneRuns: number }) {
	return {
		deliveriesPerRound: Number(process.env.BENCH_DELIVERIES || defaults.deliveriesPerRound),
		concurrency: Number(process.env.BENCH_CONCURRENCY || 8),
		rounds: Number(process.env.BENCH_ROUNDS || 2),
		aloneRuns: Number(process.env.BENCH_ALONE_RUNS || defaults.aloneRuns),
	};
}
