#!/usr/bin/env bash
# An unmodified MPI program profiled through the PMPI library, replayed and reported:
#   mpiprof_app.sh DIR LIBRARY APP REPLAY REPORT -- MPIRUN...   (MPIRUN ends with its -np flag)
set -euo pipefail
dir=$1 lib=$2 app=$3 replay=$4 report=$5
shift 6
rm -rf "$dir" && mkdir -p "$dir"
"$@" 2 -x LD_PRELOAD="$lib" -x COMMSCOPE_PROFILE_OUT="$dir/app.h5" "$app" 2 >/dev/null
"$@" 2 "$replay" "$dir/app.h5" -o "$dir/replay.h5" | tee "$dir/replay.log"
! grep -q 'not replayed' "$dir/replay.log" || { echo "mpiprof_app.sh: FAIL: calls left out"; exit 1; }
"$report" replay "$dir/app.h5" "$dir/replay.h5" | tee "$dir/report.log"
# Every call replays, per communicator: the split communicator's allreduce in its own group
# ("mpi[0]", "mpi[1]"), the ring's isend and irecv and its MPI_Sendrecv as its send and its
# receive between their recorded peers (the library labels them, a row per link), the nonblocking
# collectives and the completions (wait, test) that complete them.
grep -q 'Calls and bytes identical in all 17 communications' "$dir/report.log" ||
  { echo "mpiprof_app.sh: FAIL: wanted the 17 rows identical"; exit 1; }
grep -Eq '^mpi\[0>1\] +isend +2 +2 ' "$dir/report.log" && grep -Eq '^mpi\[1>0\] +irecv +2 +2 ' "$dir/report.log" ||
  { echo "mpiprof_app.sh: FAIL: the ring's isend and irecv not replayed between their peers"; exit 1; }
grep -Eq '^mpi\[0>1\] +send +2 +2 .* identical ' "$dir/report.log" && grep -Eq '^mpi\[1>0\] +recv +2 +2 .* identical ' "$dir/report.log" ||
  { echo "mpiprof_app.sh: FAIL: the ring's sendrecv not replayed as its send and receive between their peers"; exit 1; }
grep -Eq '^all +wait +16 +16 ' "$dir/report.log" || { echo "mpiprof_app.sh: FAIL: the waits not replayed"; exit 1; }
echo "mpiprof_app.sh: OK"
