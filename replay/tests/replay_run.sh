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
if grep -q DIFFERS "$dir/report.log"; then echo "replay_run.sh: FAIL: a row DIFFERS"; exit 1; fi
"$report" profile "$dir/replay.h5" >"$dir/profile.log" || { echo "replay_run.sh: FAIL: the replay's profile does not read"; exit 1; }
echo "replay_run.sh: OK"
