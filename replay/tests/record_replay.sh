#!/usr/bin/env bash
# A plain MPI program recorded through the PMPI library, replayed and reported:
#   record_replay.sh DIR LIBRARY REPLAY REPORT "PROGRAM [ARGS]" "REPLAY FLAGS" [CHECK...] -- MPIRUN...
# (MPIRUN ends with its -np flag; 2 ranks). The report must find every communicator's calls and
# bytes identical, and each CHECK hold: calls:NAME=N, the calls of NAME recorded and replayed over
# all communicators (replay_collectives.csv) are both N; else an extended regex the report or the
# replay's output must match.
set -euo pipefail
dir=$1 lib=$2 replay=$3 report=$4 program=$5 flags=$6
shift 6
regexes=()
while [ "$1" != "--" ]; do regexes+=("$1"); shift; done
shift
rm -rf "$dir" && mkdir -p "$dir"
# shellcheck disable=SC2086
"$@" 2 -x LD_PRELOAD="$lib" -x COMMSCOPE_PROFILE_OUT="$dir/app.h5" $program
# shellcheck disable=SC2086
"$@" 2 "$replay" "$dir/app.h5" $flags -o "$dir/replay.h5" | tee "$dir/replay.log"
"$report" replay "$dir/app.h5" "$dir/replay.h5" -o "$dir/report" | tee "$dir/report.log"
grep -q "Calls and bytes identical in all" "$dir/report.log" || { echo "record_replay.sh: FAIL: calls or bytes differ"; exit 1; }
for check in "${regexes[@]}"; do
  if [[ $check =~ ^calls:([^=]+)=([0-9]+)$ ]]; then
    name=${BASH_REMATCH[1]} want=${BASH_REMATCH[2]}
    got=$(python3 -c 'import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["communication"] == sys.argv[2]]
print(sum(int(r["calls_recorded"]) for r in rows), sum(int(r["calls_replayed"]) for r in rows))' \
      "$dir/report/replay_collectives.csv" "$name")
    [ "$got" = "$want $want" ] || { echo "record_replay.sh: FAIL: $name: calls recorded and replayed $got, wanted $want each"; exit 1; }
    continue
  fi
  grep -Eq -- "$check" "$dir/report.log" "$dir/replay.log" || { echo "record_replay.sh: FAIL: no /$check/"; exit 1; }
done
echo "record_replay.sh: OK"
