#!/usr/bin/env bash
# --profile-every N: the profile so far is written every N steps (a copy of the file appended step
# by step), and a run that dies without a chance to write anything (rank 1 SIGKILLed at the start
# of step 10 of 12, with --profile-every 4) still leaves a readable profile: rank 0's stop
# publishes the file appended step by step, its 9 steps of both ranks (the copies after steps 4
# and 8 held 4 and 8).
#   profile_every.sh TRAIN REPORT DATA WORKDIR -- launcher...   (the launcher runs TRAIN on 2 ranks)
set -u
train=$1 report=$2 data=$3 work=$4
shift 4
[ "$1" = "--" ] && shift
mkdir -p "$work"
rm -f "$work/every.h5" "$work/every.h5.partial"
log=$work/every.log
"$@" "$train" --model tiny --data "$data" --steps 12 --batch 2 --threads 1 --profile "$work/every.h5" \
  --profile-every 4 --debug-kill-rank 1 --debug-kill-step 9 >"$log" 2>&1
rc=$?
cat "$log"
fail() { echo "profile_every.sh: FAIL: $*"; exit 1; }
[ "$rc" -ne 0 ] || fail "a run with a killed rank must not exit 0"
[ "$(grep -c "^profile: .*every.h5 written (steps so far)$" "$log")" = 2 ] || fail "not two periodic writes (after steps 4 and 8)"
"$report" profile "$work/every.h5" >"$work/every-report.txt" || fail "the report cannot read the profile"
grep -q "^2 ranks, 18 (rank, iteration) rows" "$work/every-report.txt" ||
  fail "the profile does not hold 9 steps of 2 ranks: $(grep ' ranks, ' "$work/every-report.txt")"
echo "profile_every.sh: the profile of steps 1-9 read back after rank 1 was killed at step 10"
