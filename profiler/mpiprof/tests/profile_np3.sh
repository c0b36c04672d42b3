#!/usr/bin/env bash
# profile_np3.sh OUT MPIEXEC "FLAGS" LIBRARY APP CHECK REPORT: APP (mpi_app.c, 4 iterations) at 3
# ranks with LIBRARY preloaded writes the profile OUT; CHECK (check_mpiprof.cpp) finds its events
# as the program made them, and REPORT reads it: 3 ranks, 15 (rank, iteration) rows.
# FLAGS: the launcher's flags as one word (split here).
set -u
out=$1 mpiexec=$2 flags=$3 lib=$4 app=$5 check=$6 report=$7
rm -f "$out"
# shellcheck disable=SC2086
"$mpiexec" -np 3 $flags -x COMMSCOPE_PROFILE_OUT="$out" -x LD_PRELOAD="$lib" "$app" 4 ||
  { echo "profile_np3.sh: FAIL: the program exited with status $?"; exit 1; }
"$check" "$out" 4 || exit 1
"$report" profile "$out" | grep -q '^3 ranks, 15 (rank, iteration) rows' ||
  { echo "profile_np3.sh: FAIL: the report does not read 3 ranks and 15 rows"; exit 1; }
