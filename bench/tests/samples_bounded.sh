#!/usr/bin/env bash
# samples_bounded.sh WORKDIR -- bench... (one rank): with -n 0 Google Benchmark runs an 8 B
# allreduce far beyond 10,000 iterations (the -J file's actual_iterations), and the results file
# keeps at most 10,000 per-iteration samples a row (kMaxSampledIterations): 20,000 for its two
# rows. Unbounded, one rank kept every iteration's: 58 million samples, 3 GB of memory.
set -u
work=$1
shift
[ "$1" = "--" ] && shift
fail() { echo "samples_bounded.sh: FAIL: $*"; exit 1; }
command -v h5dump >/dev/null || { echo "samples_bounded.sh: no h5dump: skipped"; exit 77; }
out=$work/bounded.h5 json=$work/bounded.json
rm -f "$out" "$json"
"$@" allreduce -b 8 -e 8 --algo mpi -n 0 --benchmark_min_time=0.02 -w 1 -c 1 --out "$out" -J "$json" > /dev/null ||
  fail "the bench exited with status $?"
iters=$(python3 -c 'import json, sys; print(min(r["actual_iterations"] for r in json.load(open(sys.argv[1]))["results"]))' "$json") ||
  fail "no actual_iterations in $json"
[ "$iters" -gt 10000 ] || fail "Google Benchmark ran $iters iterations, not over 10,000: nothing to bound"
samples=$(h5dump -H -d /samples "$out" | sed -n 's/.*SIMPLE { ( \([0-9]*\) ).*/\1/p')
echo "samples_bounded.sh: $iters iterations a row, $samples samples in all"
[ -n "$samples" ] && [ "$samples" -le 20000 ] && [ "$samples" -ge 2 ] || fail "$samples samples for 2 rows (at most 20,000)"
