#!/usr/bin/env bash
# import_operators_add_up.sh IMPORT TRACES OUT REPORT: the profile report of an imported GPU
# trace (TRACES' vit128 ranks 0 and 1) has an operator table that adds up with no operator's
# other_ms below 0 (operators_add_up.py): aten::mm's kernels run after its host scope (21.8 ms on
# the host, 80.7 ms of kernels), which made other_ms -58.84 when it was host_ms minus its kernels.
# Skipped (77) without the traces.
set -u
import=$1 traces=$2 out=$3 report=$4
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "import_operators_add_up.sh: FAIL: $*"; exit 1; }
[ -e "$traces/vit128_rank-0.json.gz" ] || { echo "skipped: no PyTorch traces at $traces"; exit 77; }
rm -rf "$out" "$out.h5"
"$import" kineto "$traces/vit128_rank-0.json.gz" "$traces/vit128_rank-1.json.gz" -o "$out.h5" > /dev/null ||
  fail "the import exited with status $?"
"$report" profile "$out.h5" -o "$out" > /dev/null || fail "the report exited with status $?"
grep -q '^aten::mm,' "$out/operators.csv" || fail "operators.csv has no aten::mm row"
python3 "$here/operators_add_up.py" "$out" || fail "the operator table does not add up"
