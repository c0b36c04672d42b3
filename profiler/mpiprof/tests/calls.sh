#!/usr/bin/env bash
# calls.sh OUT MPIEXEC NP "FLAGS" LIBRARY APP CHECK: every wrapped function once (APP, mpi_calls.c,
# which writes the events it expects to OUT.rankN.txt) at NP ranks with LIBRARY preloaded; CHECK
# (check_mpiprof_calls.cpp) compares each rank's events in the profile OUT.h5 with them.
set -u
out=$1 mpiexec=$2 np=$3 flags=$4 lib=$5 app=$6 check=$7
rm -f "$out".h5 "$out".rank*.txt
# shellcheck disable=SC2086
"$mpiexec" -np "$np" $flags -x COMMSCOPE_PROFILE_OUT="$out".h5 -x LD_PRELOAD="$lib" "$app" "$out" ||
  { echo "calls.sh: FAIL: the program exited with status $?"; exit 1; }
"$check" "$out".h5 "$out"
