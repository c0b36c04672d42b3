#!/usr/bin/env bash
# The memory commscope-train prints against what the process holds: from the line
#   resident after step 1: R MiB (rank 0), G MiB more than at start; accounted above: A MiB; data D MiB
# the growth G over the start must stay within A + 2 D (the token stream and its training split)
# + MARGIN MiB (the libraries' buffers: OpenBLAS, MPI). A whole fp32 model kept resident, or a
# resumed run's AdamW moments, exceed it.
#   resident_check.sh MARGIN -- COMMAND...
set -uo pipefail
margin=$1
shift 2
out=$("$@" 2>&1)
rc=$?
line=$(printf '%s\n' "$out" | grep '^resident after step 1:')
[ $rc = 0 ] && [ -n "$line" ] || { printf '%s\n' "$out"; echo "resident_check.sh: FAIL: the run failed or printed no resident line"; exit 1; }
read -r growth accounted data < <(printf '%s\n' "$line" |
  sed -E 's/.*, ([0-9.]+) MiB more than at start; accounted above: ([0-9.]+) MiB; data ([0-9.]+) MiB.*/\1 \2 \3/')
limit=$(awk -v a="$accounted" -v d="$data" -v m="$margin" 'BEGIN { printf "%.1f", a + 2 * d + m }')
echo "$line"
echo "resident_check.sh: growth $growth MiB, limit $limit MiB (accounted $accounted + 2 x data $data + $margin)"
awk -v g="$growth" -v l="$limit" 'BEGIN { exit !(g <= l) }' || { echo "resident_check.sh: FAIL"; exit 1; }
echo "resident_check.sh: OK"
