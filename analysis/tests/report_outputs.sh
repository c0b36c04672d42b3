#!/usr/bin/env bash
# report_outputs.sh [--nonempty NAME]... OUT REPORT CHECK SUBCOMMAND ARGS...: `REPORT SUBCOMMAND
# ARGS -o OUT` into a fresh OUT, then CHECK (test_analysis_check_outputs) on OUT: report.md, CSV
# files and valid plots; each NAME must be a non-empty file in OUT. Exit 0, or non-zero naming
# what failed.
set -u
nonempty=()
while [ "${1:-}" = "--nonempty" ]; do
  nonempty+=("$2")
  shift 2
done
out=$1 report=$2 check=$3
shift 3
rm -rf "$out"
"$report" "$@" -o "$out" || { echo "report_outputs.sh: FAIL: the report exited with status $?"; exit 1; }
"$check" "$out" || exit 1
for name in "${nonempty[@]}"; do
  [ -s "$out/$name" ] || { echo "report_outputs.sh: FAIL: $out/$name is missing or empty"; exit 1; }
done
