#!/usr/bin/env bash
# loss_bound.sh BOUND -- COMMAND...: runs commscope-train and checks that its final training
# loss ("final: train loss X, ...") is below BOUND, printing the loss curve.
set -euo pipefail
bound=$1
shift 2
out=$("$@")
echo "$out" | grep -E "^step|^final" | awk 'NR % 10 == 1 || /final/'
loss=$(echo "$out" | sed -n 's/^final: train loss \([0-9.]*\),.*/\1/p')
[ -n "$loss" ] || { echo "loss_bound.sh: no final loss in the output" >&2; exit 1; }
awk -v l="$loss" -v b="$bound" 'BEGIN { if (l < b) { print "final loss " l " < " b ": ok"; exit 0 } print "final loss " l " >= " b ": FAIL"; exit 1 }'
