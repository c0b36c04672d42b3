#!/usr/bin/env bash
# no_gnuplot.sh OUT REPORT BENCH_FILE: without gnuplot on the PATH the bench report still writes
# its text, CSV files and plot scripts, draws no plot, says which plots are left to draw (on
# stderr and in report.md), and exits 0.
set -u
out=$1 report=$2 file=$3
fail() { echo "no_gnuplot.sh: FAIL: $*"; exit 1; }
rm -rf "$out"
env PATH=/nonexistent "$report" bench "$file" -o "$out" 2> "$out.err" || fail "the report exited with status $?"
for f in report.md allreduce.csv allreduce_time.gp; do [ -s "$out/$f" ] || fail "$out/$f is missing or empty"; done
[ ! -e "$out/allreduce_time.svg" ] || fail "$out/allreduce_time.svg drawn without gnuplot"
grep -q 'plots not drawn (gnuplot is not installed' "$out.err" || fail "stderr does not say the plots were not drawn"
grep -q 'not drawn, gnuplot is not installed' "$out/report.md" || fail "report.md does not say the plots were not drawn"
