#!/usr/bin/env bash
# predict_without_bench.sh OUT REPORT: predict without --bench: compute and memory alone,
# communication "-" and said not to be priced.
set -u
out=$1 report=$2
fail() { echo "predict_without_bench.sh: FAIL: $*"; exit 1; }
rm -rf "$out"
"$report" predict --model 125m --gpus 8 --flops 1e12 -o "$out" > /dev/null || fail "predict exited with status $?"
grep -q '^8,.(8,1,1).,874.9,-,-,0,0%,-,-,-,-,-,3067453440,-,communication not priced' "$out/prediction.csv" ||
  fail "prediction.csv's row of 8 ranks is not compute and memory alone"
grep -q 'No --bench: communication is not priced' "$out/report.md" || fail "report.md does not say communication is not priced"
