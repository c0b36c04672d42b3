#!/usr/bin/env bash
# scaling_refuses_import.sh IMPORT TRACES OUT EXPECT REPORT PROFILE: a PyTorch trace (TRACES'
# vit128 ranks 0 and 1, imported by IMPORT into OUT) beside the trainer's PROFILE is another
# workload: scaling refuses it (exit 2, one line, checked by EXPECT, bench/tests/expect.sh).
# Skipped (77) without the traces.
set -u
import=$1 traces=$2 out=$3 expect=$4 report=$5 profile=$6
[ -e "$traces/vit128_rank-0.json.gz" ] || { echo "skipped: no PyTorch profiler traces at $traces (the shared data folder beside the checkout, ../shared/data/kineto, not in the repository; docs/profiler.md, 'The traces the tests read', says which traces and how torch.profiler writes such files)"; exit 77; }
"$import" kineto "$traces/vit128_rank-0.json.gz" "$traces/vit128_rank-1.json.gz" -o "$out" > /dev/null ||
  { echo "scaling_refuses_import.sh: FAIL: the import exited with status $?"; exit 1; }
"$expect" 2 'another workload than .*commscope-import kineto against commscope-train' 0 -- "$report" scaling "$profile" "$out"
