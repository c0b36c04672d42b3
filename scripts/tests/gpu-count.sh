#!/usr/bin/env bash
# scripts/gpu-check.sh --count-tests on ctest logs: GPU tests that skipped are reported as
# skipped, not passed, and fail the check; all passed is status 0.
set -uo pipefail
check=$(dirname "${BASH_SOURCE[0]}")/../gpu-check.sh
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/skipped.log" <<'LOG'
      Start  69: profiler.cuda.known_durations
 1/3 Test  #69: profiler.cuda.known_durations ....................***Skipped   0.39 sec
      Start 147: bench.cuda.nccl
 2/3 Test #147: bench.cuda.nccl ..................................***Skipped   0.00 sec
      Start 148: bench.cuda.algorithms
 3/3 Test #148: bench.cuda.algorithms ............................   Passed    2.10 sec

100% tests passed, 0 tests failed out of 3
LOG
grep -v Skipped "$dir/skipped.log" | sed 's/out of 3/out of 1/' >"$dir/passed.log"
fail=0
out=$("$check" --count-tests "$dir/skipped.log"); rc=$?
echo "$out (status $rc)"
[ "$out" = "GPU tests: 1 passed, 2 skipped, 0 failed (of 3)" ] && [ $rc = 1 ] || { echo "gpu-count.sh: FAIL: skipped tests"; fail=1; }
out=$("$check" --count-tests "$dir/passed.log"); rc=$?
echo "$out (status $rc)"
[ "$out" = "GPU tests: 1 passed, 0 skipped, 0 failed (of 1)" ] && [ $rc = 0 ] || { echo "gpu-count.sh: FAIL: passed tests"; fail=1; }
exit $fail
