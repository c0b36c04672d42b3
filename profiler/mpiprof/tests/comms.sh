#!/usr/bin/env bash
# Communicators as MPI programs use them, recorded under the PMPI library, checked, replayed and
# reported:
#   comms.sh MODE NP ITERS RUNS DIR LIBRARY APP CHECK REPLAY REPORT -- MPIRUN...   (MPIRUN ends with its -np flag)
# APP (mpi_comms.c) in MODE at NP ranks with LIBRARY preloaded writes DIR/app.h5 and CHECK
# (check_mpiprof_comms.cpp) checks it, RUNS times (threads: each run races its threads again).
# Other modes: REPLAY replays the profile at NP ranks, CHECK checks both files, and REPORT's
# replay report must find the replayed calls identical (and, for pairs, say that the recorded
# messages are not split into wait and transfer). Exit 77 (skipped) without MPI_THREAD_MULTIPLE.
set -uo pipefail
mode=$1 np=$2 iters=$3 runs=$4 dir=$5 lib=$6 app=$7 check=$8 replay=$9 report=${10}
shift 10
[ "${1:-}" = "--" ] && shift
fail() { echo "comms.sh: $mode: FAIL: $*"; exit 1; }
rm -rf "$dir" && mkdir -p "$dir"
for run in $(seq 1 "$runs"); do
  "$@" "$np" -x LD_PRELOAD="$lib" -x COMMSCOPE_PROFILE_OUT="$dir/app.h5" "$app" "$mode" "$iters" >"$dir/app.log" 2>&1 ||
    { cat "$dir/app.log"; fail "run $run: the program exited with status $?"; }
  if grep -q 'no MPI_THREAD_MULTIPLE' "$dir/app.log"; then
    echo "comms.sh: skipped: this MPI gives no MPI_THREAD_MULTIPLE"
    exit 77
  fi
  "$check" "$mode" "$iters" "$dir/app.h5" >"$dir/check.log" || { cat "$dir/check.log"; fail "run $run"; }
done
cat "$dir/check.log"
[ "$mode" = threads ] && { echo "comms.sh: $mode: OK ($runs runs)"; exit 0; }

"$@" "$np" "$replay" "$dir/app.h5" -o "$dir/replay.h5" >"$dir/replay.log" 2>&1 ||
  { cat "$dir/replay.log"; fail "the replay exited with status $?"; }
cat "$dir/replay.log"
"$check" "$mode" "$iters" "$dir/app.h5" "$dir/replay.h5" || fail "the replay"
"$report" replay "$dir/app.h5" "$dir/replay.h5" >"$dir/report.log" 2>&1 || { cat "$dir/report.log"; fail "the report"; }
cat "$dir/report.log"
# The report's rows of one call over the program's communicators (a row per label: communicator,
# communication, calls recorded and replayed, ..., identical): $2 calls each way, every row identical.
identical() {
  local got
  got=$(awk -v name="$1" '$1 ~ /^mpi(\[|$)/ && $2 == name { rec += $3; rep += $4; if ($0 !~ / identical /) bad++ }
                          END { print rec + 0, rep + 0, bad + 0 }' "$dir/report.log")
  [ "$got" = "$2 $2 0" ] || fail "the report does not find $2 x $1 identical (recorded, replayed, rows differing: $got)"
}
case $mode in
  halves) identical iallreduce $((np * iters)) ;;
  dups) identical allreduce $((2 * np * iters)) && identical barrier $((np * iters)) ;;
  pairs)
    identical send $((5 * np / 2 * iters)) && identical recv $((5 * np / 2 * iters))
    grep -q 'The recorded messages (.*) are not split into wait and transfer' "$dir/report.log" ||
      fail "the report does not say that the recorded messages have no wait/transfer split"
    ;;
esac
echo "comms.sh: $mode: OK"
