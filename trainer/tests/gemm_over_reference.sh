#!/usr/bin/env bash
# gemm_over_reference.sh -- COMMAND...: a commscope-train run given a low reference (--gemm-gflops)
# prints "% of GEMM" over 100% with "above the reference, which was measured low", and no share
# over 100% without those words.
set -u
[ "$1" = "--" ] && shift
fail() { echo "gemm_over_reference.sh: FAIL: $*"; exit 1; }
out=$("$@") || fail "the run exited with status $?"
printf '%s\n' "$out" | grep 'GEMM'
printf '%s\n' "$out" | grep -q 'of GEMM: above the reference, which was measured low' ||
  fail "no 'above the reference, which was measured low'"
printf '%s\n' "$out" | grep -oE '[0-9.]+% of GEMM[^)]*' |
  awk '$1 + 0 > 100 && !/measured low/ { bad = 1 } END { exit bad }' || fail "a share over 100% printed without the words"
