#!/usr/bin/env bash
# tp_checkpoint_cli.sh TRAIN DATA DIR -- LAUNCHER...: a checkpoint saved at (dp, tp) = (1, 2)
# (DIR/tp.ckpt) holds the whole model: read back at tp 1 and at tp 2 and saved as llm.c files
# (DIR/tp1.bin, DIR/tp2.bin), it gives the same file. LAUNCHER N COMMAND runs COMMAND on N ranks.
set -u
train=$1 data=$2 d=$3
shift 3
[ "$1" = "--" ] && shift
fail() { echo "tp_checkpoint_cli.sh: FAIL: $*"; exit 1; }
"$@" 2 "$train" --model tiny --tp 2 --data "$data" --steps 3 --batch 2 --threads 1 --save "$d/tp.ckpt" ||
  fail "the tp 2 training run exited with status $?"
"$train" --load "$d/tp.ckpt" --data "$data" --steps 0 --threads 1 --save-llmc "$d/tp1.bin" ||
  fail "reading the checkpoint at tp 1 exited with status $?"
"$@" 2 "$train" --load "$d/tp.ckpt" --tp 2 --data "$data" --steps 0 --threads 1 --save-llmc "$d/tp2.bin" ||
  fail "reading the checkpoint at tp 2 exited with status $?"
cmp "$d/tp1.bin" "$d/tp2.bin" || fail "the models saved at tp 1 and tp 2 differ"
