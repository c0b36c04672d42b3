#!/usr/bin/env bash
# import_process_groups.sh IMPORT TRACES OUT REPORT: an imported PyTorch trace's collectives
# (TRACES' resnet2 rank 0) are grouped in the profile report by the process group the trace
# recorded, not put in "dp and others". Skipped (77) without the traces.
set -u
import=$1 traces=$2 out=$3 report=$4
fail() { echo "import_process_groups.sh: FAIL: $*"; exit 1; }
[ -e "$traces/resnet2_rank-0.json.gz" ] || { echo "skipped: no PyTorch profiler traces at $traces (the shared data folder beside the checkout, ../shared/data/kineto, not in the repository; docs/profiler.md, 'The traces the tests read', says which traces and how torch.profiler writes such files)"; exit 77; }
"$import" kineto "$traces/resnet2_rank-0.json.gz" -o "$out" > /dev/null || fail "the import exited with status $?"
"$report" profile "$out" > "$out.txt" || fail "the report exited with status $?"
grep -qE '^process group 0 default_pg +allreduce +10 ' "$out.txt" || fail "no row of process group 0's 10 allreduces"
if grep -q '^dp and others' "$out.txt"; then fail "collectives put in 'dp and others'"; fi
