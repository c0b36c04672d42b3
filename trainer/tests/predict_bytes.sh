#!/usr/bin/env bash
# predict_bytes.sh PYTHON REPORT PREDICTED TP PP -- PREDICT_ARGS... -- COMMAND...: COMMAND (a
# profiled commscope-train run writing PREDICTED.h5) runs; `REPORT predict PREDICT_ARGS... -o
# PREDICTED` prices the same model and layout, and predict_bytes.py compares the bytes per group.
# PYTHON: a python3 with h5py, or "none" (exit 77: skipped).
set -u
python=$1 report=$2 predicted=$3 tp=$4 pp=$5
shift 5
[ "$1" = "--" ] && shift
predict=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do predict+=("$1"); shift; done
[ $# -gt 0 ] && shift
fail() { echo "predict_bytes.sh: FAIL: $*"; exit 1; }
[ "$python" != none ] || { echo "no python3 with h5py (Debian: python3-h5py): skipped"; exit 77; }
"$@" > /dev/null || fail "the run exited with status $?"
rm -rf "$predicted"
"$report" predict "${predict[@]}" -o "$predicted" > /dev/null || fail "predict exited with status $?"
"$python" "$(dirname "$0")/predict_bytes.py" "$predicted.h5" "$predicted" "$tp" "$pp"
