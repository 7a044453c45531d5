#!/usr/bin/env bash
# Runs every benchmark in turn. Benchmarks print ratios against their targets; they never fail.
cd "$(dirname "$0")/.." || exit 1
for bench in bench/*.ts; do
	echo "== $bench"
	node --require ts-node/register/transpile-only "$bench" || echo "($bench stopped with an error)"
done
