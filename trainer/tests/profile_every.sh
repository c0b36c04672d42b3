#!/usr/bin/env bash
# --profile-every N: the profile so far is written every N steps, so a run that dies without a
# chance to write anything (one rank SIGKILLed at step 9 of 12, with --profile-every 4) still
# leaves a readable profile of its first 8 steps on both ranks.
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
grep -q "^2 ranks, 16 (rank, iteration) rows" "$work/every-report.txt" ||
  fail "the profile does not hold 8 steps of 2 ranks: $(grep ' ranks, ' "$work/every-report.txt")"
echo "profile_every.sh: the profile of steps 1-8 read back after rank 1 was killed at step 9"
