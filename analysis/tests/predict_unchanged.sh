#!/usr/bin/env bash
# predict_unchanged.sh OUT BEFORE REPORT ARGS...: `REPORT predict ARGS -o OUT`, whose CSV files
# must hold the cells of the earlier report's in BEFORE (predict_unchanged.py compares them).
set -u
out=$1 before=$2 report=$3
shift 3
rm -rf "$out"
"$report" predict "$@" -o "$out" > /dev/null || { echo "predict_unchanged.sh: FAIL: predict exited with status $?"; exit 1; }
python3 "$(dirname "$0")/predict_unchanged.py" "$before" "$out"
