#!/usr/bin/env bash
# stalled_plot_labels.sh PLOT: the bench report's time plot script PLOT says what its lines fit:
# the measured points are mean calls, the fits' points median calls.
set -u
for want in 'ring measured (mean call)' 'ring fitted (median call)' 'lines are of the fitted time (median call)'; do
  grep -qF "$want" "$1" || { echo "stalled_plot_labels.sh: FAIL: no '$want' in $1"; exit 1; }
done
