#!/usr/bin/env bash
# A trainer's profile replayed and set against it:
#   replay_run.sh DIR TRAIN REPLAY REPORT TEXT RANKS "TRAIN FLAGS" "REPLAY FLAGS" [WANT] -- MPIRUN...
# records `TRAIN --model tiny TRAIN FLAGS` on RANKS ranks, replays it (REPLAY FLAGS, on as many
# ranks unless they say --ranks) and checks that 'commscope-report replay' finds every
# collective's calls and bytes identical and 'commscope-report profile' reads the replay.
# WANT: an extended regex the replay's output must also match. Times are printed, not judged
# (a loaded machine's timings say nothing).
set -euo pipefail
dir=$1 train=$2 replay=$3 report=$4 text=$5 ranks=$6 train_flags=$7 replay_flags=$8
shift 8
want=""
[ "$1" != "--" ] && { want=$1; shift; }
shift  # --
mpirun=("$@")
rm -rf "$dir" && mkdir -p "$dir"
replay_ranks=$ranks
if [[ $replay_flags =~ --ranks\ ([0-9,]+) ]]; then replay_ranks=$(($(tr -cd , <<<"${BASH_REMATCH[1]}" | wc -c) + 1)); fi
# shellcheck disable=SC2086
"${mpirun[@]}" "$ranks" "$train" --model tiny --data "$text" --batch 4 --threads 1 $train_flags \
  --profile "$dir/run.h5" >"$dir/train.log"
# shellcheck disable=SC2086
"${mpirun[@]}" "$replay_ranks" "$replay" "$dir/run.h5" $replay_flags -o "$dir/replay.h5" | tee "$dir/replay.log"
[ -z "$want" ] || grep -Eq -- "$want" "$dir/replay.log" || { echo "replay_run.sh: FAIL: no /$want/ in the replay's output"; exit 1; }
"$report" replay "$dir/run.h5" "$dir/replay.h5" -o "$dir/report" | tee "$dir/report.log"
grep -q "Calls and bytes identical in all" "$dir/report.log" || { echo "replay_run.sh: FAIL: calls or bytes differ"; exit 1; }
# (a table cell: the text above the table names the word too)
if grep -Eq '(^| )DIFFERS( |$)' "$dir/report.log"; then echo "replay_run.sh: FAIL: a row DIFFERS"; exit 1; fi
# Each step's communication, recorded and replayed, splits into waiting and transfer that add up
# to it (to the rounding of 4 significant digits), and the summary says which part moved.
awk -F, '{ sub(/\r$/, "") } NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
  function off(c, w, x) { return c - w - x < 0 ? w + x - c : c - w - x }
  { if (!("recorded_wait_ms" in col)) { print "no wait/transfer columns"; bad = 1; exit }
    for (k = 0; k < 2; ++k) { p = k ? "replayed_" : "recorded_"
      c = $col[p "comm_ms"]; w = $col[p "wait_ms"]; x = $col[p "transfer_ms"]
      if (off(c, w, x) > 0.002 * c + 0.001) { print "step " $1 ": " p "comm " c " != wait " w " + transfer " x; bad = 1 } } }
  END { exit bad }' "$dir/report/replay_iterations.csv" || { echo "replay_run.sh: FAIL: wait + transfer is not the communication"; exit 1; }
# Where both ran, as their profiles record it (the CPUs each rank could use, its host's CPUs).
grep -Eq "^placement: $replay_ranks ranks? on 1 host of [0-9]+ CPUs, " "$dir/replay.log" ||
  { echo "replay_run.sh: FAIL: the replay does not say where its ranks ran"; exit 1; }
grep -Eq "^Placement of the recording: $ranks ranks? on 1 host of [0-9]+ CPUs, .*; of the replay: $replay_ranks ranks? on " "$dir/report.log" ||
  { echo "replay_run.sh: FAIL: the report does not set the two placements side by side"; exit 1; }
grep -q "waiting for the last rank to arrive: .* the transfers after it: " "$dir/report.log" ||
  { echo "replay_run.sh: FAIL: the summary does not split waiting from transfer"; exit 1; }
"$report" profile "$dir/replay.h5" >"$dir/profile.log" || { echo "replay_run.sh: FAIL: the replay's profile does not read"; exit 1; }
echo "replay_run.sh: OK"
