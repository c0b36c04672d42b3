#!/usr/bin/env bash
# doctor_windows_apart.sh -- launcher-and-doctor... (4 ranks, serial probes, --probe-time 0.2,
# rank 1 slowed to a tenth for the probe phase's first 3 s): a rank's probe windows lie apart (one
# a rank per round), so that a few seconds of interference spoil one of them, not all: rank 1's
# sgemm reads within 3x of the others' median. Back to back (all three in one turn, 1.3-2.6 s into
# the phase) every window was slowed, and rank 1 read a tenth of its peers.
set -u
[ "$1" = "--" ] && shift
fail() { echo "doctor_windows_apart.sh: FAIL: $*"; exit 1; }
log=$("$@" 2>&1) || fail "the doctor exited with status $?: $log"
rows=$(printf '%s\n' "$log" | sed -n 's/^ *rank *\([0-9]*\) .* sgemm *\([0-9.e+-]*\) GFLOP\/s.*/\1 \2/p')
printf '%s\n' "$log" | grep -A4 '^# probes'
[ "$(printf '%s\n' "$rows" | wc -l)" = 4 ] || fail "not 4 probe rows: $rows"
printf '%s\n' "$rows" | awk '
  $1 == 1 { slowed = $2; next }
  { v[n++] = $2 }
  END {
    # the median of the three others
    for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
    median = v[1]
    printf "doctor_windows_apart.sh: rank 1 %.3g GFLOP/s, the others'"'"' median %.3g\n", slowed, median
    if (!(slowed * 3 >= median)) { print "doctor_windows_apart.sh: FAIL: rank 1 under a third of the others"; exit 1 }
  }'
