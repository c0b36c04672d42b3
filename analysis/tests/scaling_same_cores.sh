#!/usr/bin/env bash
# scaling_same_cores.sh OUT REPORT BASE RUN: scaling from BASE (1 rank x 2 threads) to RUN (2
# ranks x 1 thread): the report says they share the same 2 cores, that no speedup is possible and
# that it gives no communication efficiency or predicted speedup; scaling.csv's rows say so ("-");
# the speedup plot draws no ideal line and says why.
set -u
out=$1 report=$2
fail() { echo "scaling_same_cores.sh: FAIL: $*"; exit 1; }
rm -rf "$out"
"$report" scaling "$3" "$4" -o "$out" > /dev/null || fail "the report exited with status $?"
for want in 'share the same 2 cores' 'no speedup is possible' 'no communication efficiency or predicted speedup'; do
  grep -q "$want" "$out/report.md" || fail "report.md does not say '$want'"
done
grep -q '^1,.(1,1,1).,2,' "$out/scaling.csv" || fail "scaling.csv has no row of 1 rank on 2 cores"
grep -q '^2,.(2,1,1).,2,.*,-,-' "$out/scaling.csv" || fail "scaling.csv's row of 2 ranks gives figures it cannot"
# The speedup plot draws no ideal line where no speedup is possible, and says why on the plot.
grep -q 'ideal' "$out/speedup.gp" && fail "speedup.gp draws an ideal line where no speedup is possible"
grep -q "no speedup is possible" "$out/speedup.gp" || fail "speedup.gp does not say that no speedup is possible"
exit 0
