#!/usr/bin/env bash
# doctor_heatmap_from_zero.sh OUT REPORT DOCTOR_FILE: the doctor report's two heatmaps (bandwidth
# and latency) colour from 0 (a 3% spread is not drawn as bad against good) and their titles
# state the values' range.
set -u
out=$1 report=$2 file=$3
rm -rf "$out"
"$report" doctor "$file" -o "$out" > /dev/null || { echo "doctor_heatmap_from_zero.sh: FAIL: the report exited with status $?"; exit 1; }
plots=("$out/pairs_bandwidth.gp" "$out/pairs_latency.gp")
n=$(cat "${plots[@]}" | grep -c '^set cbrange \[0:\*\]')
[ "$n" = 2 ] || { echo "doctor_heatmap_from_zero.sh: FAIL: $n of 2 heatmaps colour from 0"; exit 1; }
n=$(cat "${plots[@]}" | grep -c 'colours from 0, values [0-9.]* to [0-9.]*')
[ "$n" = 2 ] || { echo "doctor_heatmap_from_zero.sh: FAIL: $n of 2 heatmap titles state the range"; exit 1; }
