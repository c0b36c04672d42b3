#!/usr/bin/env bash
# load_shape_cli.sh TRAIN DATA DIR: a model file gives the model. The tiny model saved after one
# step (DIR/shape.ckpt, DIR/shape.bin) loads beside flags that name its shape (--model tiny, --dim
# 32) and is refused, one line and exit 2, beside flags that name another (--model small,
# --layers 3); --load and --load-llmc together are refused. Before, the flags were left unread:
# `--model small --load tiny.ckpt` trained the tiny model.
set -u
train=$1 data=$2 d=$3
fail() { echo "load_shape_cli.sh: FAIL: $*"; exit 1; }
ckpt=$d/shape.ckpt llmc=$d/shape.bin
rm -f "$ckpt" "$llmc"
"$train" --model tiny --data "$data" --steps 1 --batch 2 --threads 1 --save "$ckpt" --save-llmc "$llmc" >/dev/null ||
  fail "the training run exited with status $?"
refused() {  # WORDS, then the flags: exit 2 with one line holding WORDS
  local words=$1
  shift
  out=$("$train" --data "$data" --steps 0 --batch 2 --threads 1 "$@" 2>&1)
  rc=$?
  [ "$rc" = 2 ] || fail "$* exited with status $rc, not 2: $out"
  [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || fail "$*: not one line: $out"
  printf '%s\n' "$out" | grep -qF -- "$words" || fail "$*: no '$words' in: $out"
}
refused "--model small (6 layers, 6 heads, 384 channels, vocabulary 256) is not the model in $ckpt (2 layers, 2 heads, 32 channels, vocabulary 256): the file gives the model" \
  --model small --load "$ckpt"
refused "--layers 3 (3 layers, 2 heads, 32 channels, vocabulary 256) is not the model in $llmc" --layers 3 --load-llmc "$llmc"
refused "--load and --load-llmc both give the model: give one" --load "$ckpt" --load-llmc "$llmc"
"$train" --data "$data" --steps 0 --batch 2 --threads 1 --model tiny --dim 32 --load "$ckpt" >/dev/null ||
  fail "--model tiny --dim 32 --load (its own shape) exited with status $?"
echo "load_shape_cli.sh: shapes checked"
