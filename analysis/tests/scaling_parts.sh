#!/usr/bin/env bash
# scaling_parts.sh OUT REPORT BENCH RUNS...: `scaling --bench` says its times are milliseconds (its
# columns are ms; it said "seconds per iteration") and sets each part of the predicted step
# against the measured one with its own error (compute, tp, pp, dp) and the measured rest of the
# step that nothing predicts, so that a step right only because its parts' misses cancel shows
# (the numbers: check-report.py scaling_3d; the words on cancelling: analysis.unit PredictionParts).
set -u
out=$1 report=$2 bench=$3
shift 3
fail() { echo "scaling_parts.sh: FAIL: $*"; exit 1; }
rm -rf "$out"
"$report" scaling "$@" --bench "$bench" -o "$out" > /dev/null || fail "the report exited with status $?"
grep -q 'Times are milliseconds per iteration' "$out/report.md" || fail "report.md does not say its times are ms"
if grep -qE '(^|[ (])seconds per iteration' "$out/report.md"; then fail "report.md calls its ms columns seconds"; fi
header=$(head -n 1 "$out/predicted_vs_measured.csv" | tr -d '\r')
for column in compute_error tp_error pp_error dp_error rest_ms; do
  case ",$header," in *",$column,"*) ;; *) fail "predicted_vs_measured.csv has no $column: $header" ;; esac
done
grep -q 'rest_ms = the step less those parts' "$out/report.md" || fail "report.md does not say what rest_ms is"
echo "scaling_parts.sh: ok"
