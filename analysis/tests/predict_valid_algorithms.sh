#!/usr/bin/env bash
# predict_valid_algorithms.sh OUT REPORT BENCH_FILE: predict from a one-node bench of 4 ranks
# prices groups of 8 and more with neither shm nor hier (the calls' notes say they were left out),
# notes every size beyond the bench's 32 KiB, prices no call below 0, and warns that a CPU bench
# with a GPU's --flops mixes devices.
set -u
out=$1 report=$2 bench=$3
fail() { echo "predict_valid_algorithms.sh: FAIL: $*"; exit 1; }
rm -rf "$out"
"$report" predict --model 125m --gpus 8,64,512 --zero 2 --bench "$bench" --flops 1e14 -o "$out" > /dev/null ||
  fail "predict exited with status $?"
c=$out/communication.csv
if cut -d, -f6 "$c" | grep -qE '^(shm|hier)$'; then fail "a call priced with shm or hier"; fi
grep -q '^512,reducescatter,.*shm, hier left out (not valid on 512 ranks from a bench of 4 ranks per node)' "$c" ||
  fail "the 512-rank reducescatter does not say shm and hier were left out"
grep -q 'beyond the measured sizes (up to 32 KiB)' "$c" || fail "no size noted beyond the measured 32 KiB"
if cut -d, -f7 "$c" | grep -q '^-[0-9]'; then fail "a call priced below 0 ms"; fi
grep -q "communication measured on CPUs, compute at a GPU's rate" "$out/prediction.csv" ||
  fail "prediction.csv does not note the devices' mix"
grep -q 'WARNING: communication measured on CPUs' "$out/report.md" || fail "report.md does not warn of the devices' mix"
