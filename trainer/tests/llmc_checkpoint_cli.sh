#!/usr/bin/env bash
# llmc_checkpoint_cli.sh TRAIN DATA DIR: llm.c checkpoints through the command line: the tiny
# model trained 3 steps and saved (DIR/a.bin), loaded and saved again without a step (DIR/b.bin):
# identical files.
set -u
train=$1 data=$2 d=$3
fail() { echo "llmc_checkpoint_cli.sh: FAIL: $*"; exit 1; }
"$train" --model tiny --data "$data" --steps 3 --batch 2 --threads 1 --save-llmc "$d/a.bin" ||
  fail "the training run exited with status $?"
"$train" --load-llmc "$d/a.bin" --data "$data" --steps 0 --threads 1 --save-llmc "$d/b.bin" ||
  fail "the reloading run exited with status $?"
cmp "$d/a.bin" "$d/b.bin" || fail "the file saved again differs"
