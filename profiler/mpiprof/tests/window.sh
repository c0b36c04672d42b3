#!/usr/bin/env bash
# window.sh OUT MPIEXEC "FLAGS" LIBRARY APP REPORT: time windows (COMMSCOPE_WINDOW_MS=2) on top
# of MPI_Pcontrol cut every iteration of APP (mpi_app.c, 4 iterations at 2 ranks) once more at
# least: 18 (rank, iteration) rows or more in OUT. A bad value (soon) is said and ignored.
set -u
out=$1 mpiexec=$2 flags=$3 lib=$4 app=$5 report=$6
fail() { echo "window.sh: FAIL: $*"; exit 1; }
rm -f "$out"
# shellcheck disable=SC2086
"$mpiexec" -np 2 $flags -x COMMSCOPE_WINDOW_MS=2 -x COMMSCOPE_PROFILE_OUT="$out" -x LD_PRELOAD="$lib" "$app" 4 > /dev/null 2>&1 ||
  fail "the program exited with status $?"
rows=$("$report" profile "$out" | sed -n 's/^2 ranks, \([0-9]*\) (rank, iteration) rows.*/\1/p')
echo "rows: $rows"
[ -n "$rows" ] && [ "$rows" -ge 18 ] || fail "$rows rows, 18 or more wanted"
# shellcheck disable=SC2086
bad=$("$mpiexec" -np 1 $flags -x COMMSCOPE_WINDOW_MS=soon -x COMMSCOPE_PROFILE_OUT="$out" -x LD_PRELOAD="$lib" "$app" 1 2>&1) ||
  fail "the program with COMMSCOPE_WINDOW_MS=soon exited with status $?"
printf '%s\n' "$bad" | grep -q "COMMSCOPE_WINDOW_MS='soon' is not a positive number: ignored" ||
  fail "COMMSCOPE_WINDOW_MS=soon is not said to be ignored"
