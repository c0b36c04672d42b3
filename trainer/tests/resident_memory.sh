#!/usr/bin/env bash
# resident_memory.sh TRAIN DATA DIR MARGIN -- LAUNCHER...: a 2-rank run of the small model saves a
# checkpoint (DIR/resident.ckpt); a run resumed from it under ZeRO-3 (whole parameters and both
# AdamW moments read) must hold, after step 1, what it prints plus the data and MARGIN MiB
# (resident_check.sh). LAUNCHER N COMMAND runs COMMAND on N ranks.
set -u
train=$1 data=$2 d=$3 margin=$4
shift 4
[ "$1" = "--" ] && shift
run=(--steps 2 --batch 2 --threads 1 --val-fraction 0 --data "$data" --seq 64)
"$@" 2 "$train" --model small --steps 1 --batch 2 --threads 1 --val-fraction 0 --data "$data" --seq 64 \
  --save "$d/resident.ckpt" > /dev/null || { echo "resident_memory.sh: FAIL: the saving run exited with status $?"; exit 1; }
exec "$(dirname "$0")/resident_check.sh" "$margin" -- "$@" 2 "$train" --load "$d/resident.ckpt" --dp zero3 "${run[@]}"
