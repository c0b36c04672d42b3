#!/usr/bin/env bash
# The trainer's calls outside its steps (validation between them) replayed in their recorded
# order and place:
#   outside_iterations.sh DIR TRAIN REPLAY ORDER TEXT -- MPIRUN...   (MPIRUN ends with its -np flag)
# records 3 steps of the tiny model at tp 2 with a validation batch after each, replays it, and
# has ORDER (order_check.cpp) set each rank's replayed calls against the recorded ones.
set -euo pipefail
dir=$1 train=$2 replay=$3 order=$4 text=$5
shift 6
rm -rf "$dir" && mkdir -p "$dir"
"$@" 2 "$train" --model tiny --data "$text" --batch 4 --threads 1 --tp 2 --steps 3 --val-every 1 \
  --val-fraction 0.2 --val-batches 1 --profile "$dir/run.h5" >"$dir/train.log"
"$@" 2 "$replay" "$dir/run.h5" --timeout 60 -o "$dir/replay.h5" | tee "$dir/replay.log"
"$order" "$dir/run.h5" "$dir/replay.h5"
