#!/usr/bin/env bash
# comm_bytes.sh PYTHON REPORT BENCH PROFILE MODE ZERO PREDICTED -- COMMAND...: COMMAND (the tiny
# model, data-parallel MODE, on 3 ranks, writing PROFILE) runs; comm_bytes.py then checks the
# bytes each collective carried against docs/trainer.md's arithmetic and against what
# `REPORT predict --zero ZERO` prices for the same model (written to PREDICTED; BENCH: a synthetic
# bench file). PYTHON: a python3 with h5py, or "none" (exit 77: skipped).
set -u
python=$1 report=$2 bench=$3 profile=$4 mode=$5 zero=$6 predicted=$7
shift 7
[ "$1" = "--" ] && shift
fail() { echo "comm_bytes.sh: FAIL: $*"; exit 1; }
[ "$python" != none ] || { echo "no python3 with h5py (Debian: python3-h5py): skipped"; exit 77; }
"$@" > /dev/null || fail "the run exited with status $?"
rm -rf "$predicted"
# The tiny model: 2 layers, 32 channels, 2 heads, 32 positions, a vocabulary of 256.
"$report" predict --layers 2 --dim 32 --heads 2 --seq 32 --vocab 256 --gpus 3 --zero "$zero" --bytes-per-param 4 \
  --bench "$bench" --flops 1e12 -o "$predicted" > /dev/null || fail "predict exited with status $?"
"$python" "$(dirname "$0")/comm_bytes.py" "$profile" "$mode" 3 256 32 32 2 "$predicted"
