#!/usr/bin/env bash
# A program in the style of a real application (programs/app_grid.c: a library's duplicated
# communicators, a 2 x 2 grid's rows and columns, a halo exchange, a nonblocking column allreduce
# overlapped with a world message, a receive posted across iterations) recorded through the PMPI
# library at 4 ranks, replayed and reported, each against the program's own counts:
#   app_grid.sh DIR LIBRARY APP DUMP REPLAY REPORT ITERS -- MPIRUN...   (MPIRUN ends with its -np flag)
# The recorded profile and the replay's hold, per rank, communicator and call, the calls and bytes
# the program counted as it made them (app_counts.py, on DUMP's reading of each file); the replay
# ends by itself (--timeout 30: a deadlock is one line and exit 1, never a hang), leaving nothing
# out; the report finds every row identical, its counts the program's summed over the ranks.
set -uo pipefail
dir=$1 lib=$2 app=$3 dump=$4 replay=$5 report=$6 iters=$7
shift 7
[ "${1:-}" = "--" ] && shift
np=4
counts=$(dirname "$0")/app_counts.py
fail() { echo "app_grid.sh: FAIL: $*"; exit 1; }
rm -rf "$dir" && mkdir -p "$dir"

# A hang past these (a deadlocked program or replay) is said, not waited out to ctest's limit.
timeout -k 5 120 "$@" "$np" -x LD_PRELOAD="$lib" -x COMMSCOPE_PROFILE_OUT="$dir/app.h5" "$app" "$dir/program" "$iters" \
  >"$dir/app.log" 2>&1
status=$?
cat "$dir/app.log"
[ "$status" = 0 ] || fail "the program under the library exited with status $status (124: killed after 120 s)"
"$dump" "$dir/app.h5" >"$dir/app.json" || fail "cannot read the recorded profile"
python3 "$counts" profile "$dir/program" "$np" "$dir/app.json" recorded || fail "the recorded profile"

timeout -k 5 150 "$@" "$np" "$replay" "$dir/app.h5" --timeout 30 -o "$dir/replay.h5" >"$dir/replay.log" 2>&1
status=$?
cat "$dir/replay.log"
[ "$status" = 0 ] || fail "the replay exited with status $status (124: killed after 150 s)"
! grep -Eq 'no progress for|not replayed|recorded for it|dropped' "$dir/replay.log" ||
  fail "the replay timed out or left calls out"
"$dump" "$dir/replay.h5" >"$dir/replay.json" || fail "cannot read the replay's profile"
python3 "$counts" profile "$dir/program" "$np" "$dir/replay.json" replayed || fail "the replay's profile"

"$report" replay "$dir/app.h5" "$dir/replay.h5" -o "$dir/report" >"$dir/report.log" 2>&1
status=$?
cat "$dir/report.log"
[ "$status" = 0 ] || fail "the report exited with status $status"
# The summary says identical, and no row of either table says DIFFERS (before its times).
grep -q 'Calls and bytes identical in all' "$dir/report.log" || fail "the report's summary does not say identical"
! grep -Eq 'DIFFER in| DIFFERS +[0-9]' "$dir/report.log" || fail "the report finds calls or bytes that differ"
python3 "$counts" report "$dir/program" "$np" "$dir/report/replay_collectives.csv" || fail "the report's counts"
echo "app_grid.sh: OK"
