#!/usr/bin/env bash
# scaling_allow_mixed.sh OUT REPORT RUN1 RUN2: runs of different workloads compared with
# --allow-mixed: the report is written and says so.
set -u
out=$1 report=$2
rm -rf "$out"
"$report" scaling "$3" "$4" --allow-mixed -o "$out" > /dev/null ||
  { echo "scaling_allow_mixed.sh: FAIL: the report exited with status $?"; exit 1; }
grep -q 'MIXED WORKLOADS (--allow-mixed)' "$out/report.md" ||
  { echo "scaling_allow_mixed.sh: FAIL: report.md does not say the workloads are mixed"; exit 1; }
