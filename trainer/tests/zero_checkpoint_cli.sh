#!/usr/bin/env bash
# zero_checkpoint_cli.sh TRAIN DATA DIR -- LAUNCHER...: a checkpoint holds the whole parameters and
# AdamW moments whatever the data-parallel mode kept on each rank: 3 steps on 2 ranks under ddp,
# zero1 and zero3 save the same file (DIR/MODE.ckpt), and each, read under zero2 and saved again
# without a step (DIR/MODE-again.ckpt), gives the same file. LAUNCHER N COMMAND runs COMMAND on N
# ranks.
set -u
train=$1 data=$2 d=$3
shift 3
[ "$1" = "--" ] && shift
fail() { echo "zero_checkpoint_cli.sh: FAIL: $*"; exit 1; }
for mode in ddp zero1 zero3; do
  "$@" 2 "$train" --model tiny --data "$data" --steps 3 --batch 2 --threads 1 --dp "$mode" --save "$d/$mode.ckpt" \
    > /dev/null || fail "the $mode run exited with status $?"
  "$@" 2 "$train" --load "$d/$mode.ckpt" --data "$data" --steps 0 --threads 1 --dp zero2 --save "$d/$mode-again.ckpt" \
    > /dev/null || fail "reading the $mode checkpoint under zero2 exited with status $?"
  cmp "$d/$mode.ckpt" "$d/$mode-again.ckpt" || fail "the $mode checkpoint saved again under zero2 differs"
done
cmp "$d/ddp.ckpt" "$d/zero1.ckpt" || fail "ddp's and zero1's checkpoints differ"
cmp "$d/ddp.ckpt" "$d/zero3.ckpt" || fail "ddp's and zero3's checkpoints differ"
echo "zero_checkpoint_cli.sh: the checkpoints of ddp, zero1 and zero3 and their re-saves under zero2 are identical"
