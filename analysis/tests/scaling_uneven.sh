#!/usr/bin/env bash
# scaling_uneven.sh TRAIN REPORT FIXTURES OUT DATA -- MPIRUN...: commscope-report scaling with a run
# whose stages are uneven (tiny with 3 layers over 2 stages on 2 ranks, profiled here by
# MPIRUN 2 TRAIN; another workload than the fixtures' 2 layers, hence --allow-mixed):
#   1. as the baseline beside FIXTURES/train-np4.h5, with --bench: the report is written, that run
#      is listed without a prediction and the 4-rank run is predicted;
#   2. beside FIXTURES/train-np2.h5 ((2,1,1), the baseline: the same rank count, another layout):
#      its prediction error is given ("-" is the baseline's own row only).
# Exit 0, or 1 naming the check that failed.
set -euo pipefail
train=$1 report=$2 fx=$3 out=$4 data=$5
shift 5
[ "${1:-}" = -- ] && shift
rm -rf "$out"
mkdir -p "$out"
"$@" 2 "$train" --model tiny --layers 3 --pp 2 --steps 3 --batch 4 --threads 1 --data "$data" \
  --profile "$out/uneven.h5" >"$out/train.log"
fail() {
  echo "scaling_uneven: $1" >&2
  exit 1
}

"$report" scaling "$out/uneven.h5" "$fx/train-np4.h5" --bench "$fx/bench-np2.h5" --allow-mixed -o "$out/baseline" >/dev/null ||
  fail "scaling with an uneven baseline failed"
csv=$out/baseline/predicted_vs_measured.csv
grep -F '2,"(1,1,2)",0,' "$csv" | grep -qF 'stages or heads not equal' || fail "no unpredicted uneven row in $csv"
grep -qE '^4,"\(4,1,1\)",0,[0-9.]+,[0-9.]+,-?[0-9.]+%,' "$csv" || fail "the 4-rank run is not predicted in $csv"

"$report" scaling "$fx/train-np2.h5" "$out/uneven.h5" --allow-mixed -o "$out/same_ranks" >/dev/null || fail "scaling failed"
csv=$out/same_ranks/scaling.csv
# ranks, layout, then cores .. predicted_speedup (9 columns), then prediction_error
grep -qE '^2,"\(1,1,2\)",([^,]*,){9}-?[0-9.]+%' "$csv" || fail "no prediction error for (1,1,2) in $csv"
grep -qE '^2,"\(2,1,1\)",([^,]*,){9}-' "$csv" || fail "the baseline's own row has an error in $csv"
echo "scaling_uneven: ok"
