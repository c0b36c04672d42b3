#!/usr/bin/env bash
# layouts_plotted.sh DIR: the scaling report of 1 rank, 4 ranks (4,1,1) and 4 ranks (1,2,2) x2 in
# DIR draws each layout apart: the speedup plot has a measured series per layout shape (data
# parallel; tp 2, pp 2, 2 micro-batches), so no line joins the two runs of 4 ranks; every bar of
# the iteration parts names its layout (the data parallel one read "4", as if it had none).
set -u
fail() { echo "layouts_plotted.sh: FAIL: $*"; exit 1; }
for want in "title 'measured (data parallel)'" "title 'measured (tp 2, pp 2, 2 micro-batches)'"; do
  grep -qF "$want" "$1/speedup.gp" || fail "speedup.gp has no series $want"
done
grep -qF "'1 (1,1,1)' 0, '4 (4,1,1)' 1, '4 (1,2,2) x2' 2" "$1/iteration_parts.gp" ||
  fail "iteration_parts.gp's bars do not all name their layout: $(grep xtics "$1/iteration_parts.gp")"
echo "layouts_plotted.sh: each layout drawn apart"
