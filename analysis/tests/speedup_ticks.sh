#!/usr/bin/env bash
# speedup_ticks.sh DIR: the scaling report's speedup plot ticks whole rank counts (1, 2, 4).
set -u
grep -x 'set xtics.*' "$1/speedup.gp"
grep -qx 'set xtics (1, 2, 4)' "$1/speedup.gp" || { echo "speedup_ticks.sh: FAIL: the ticks are not 1, 2, 4"; exit 1; }
