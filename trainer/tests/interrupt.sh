#!/usr/bin/env bash
# A stop during training (SIGTERM to every rank, as a scheduler's cancel or Open MPI's mpirun at a
# Ctrl-C sends): the run must publish the profile so far (the steps appended before the signal),
# write the checkpoint of the last step, say so,
# exit non-zero, and both files must read back: the report reads the profile, and a run resumed
# from the checkpoint continues at the next step. The ranks are signalled directly (the launcher's
# children): at a SIGINT to mpirun itself, its job teardown lost the ranks' output now and then
# (1 run in 5 on a loaded machine), which this test is not about.
#   interrupt.sh TRAIN REPORT DATA WORKDIR -- launcher...   (the launcher runs TRAIN on 2 ranks)
set -u
train=$1 report=$2 data=$3 work=$4
shift 4
[ "$1" = "--" ] && shift
mkdir -p "$work"
rm -f "$work/stop.ckpt" "$work/stop.h5" "$work/stop.h5.partial"
log=$work/stop.log
"$@" "$train" --model tiny --data "$data" --steps 1000000 --batch 2 --threads 1 --log-every 10 --save-every 5 \
  --save "$work/stop.ckpt" --profile "$work/stop.h5" >"$log" 2>&1 &
pid=$!
# Wait for the first periodic checkpoint (or give up after 60 s).
for _ in $(seq 600); do
  grep -q '^saved .*stop.ckpt (step 5)' "$log" && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.1
done
ranks=$(pgrep -P $pid)
[ -n "$ranks" ] || { cat "$log"; echo "interrupt.sh: FAIL: no ranks under the launcher"; exit 1; }
kill -TERM $ranks
wait $pid
rc=$?
cat "$log"
echo "interrupt.sh: exit status $rc after SIGTERM"
fail() { echo "interrupt.sh: FAIL: $*"; exit 1; }
[ "$rc" -ne 0 ] || fail "a stopped run must not exit 0"
step=$(sed -n 's/^stopped by SIG[A-Z]* after step \([0-9]*\)$/\1/p' "$log")
[ -n "$step" ] || fail "no 'stopped by ... after step N' line"
grep -q "^saved .*stop.ckpt (step $step)\$" "$log" || fail "no checkpoint of step $step"
grep -q "^commscope-train: rank 0: kept [0-9]* steps in .*stop.h5\$" "$log" || fail "rank 0 did not say where the profile is"
grep -q "^profile: .*stop.h5 ([0-9]* steps, those written before the stop); per iteration" "$log" ||
  fail "the profile was not written"
"$report" profile "$work/stop.h5" >"$work/stop-report.txt" || fail "the report cannot read the profile"
grep -q "^2 ranks, [0-9]* (rank, iteration) rows" "$work/stop-report.txt" || fail "the profile has no steps"
"$train" --load "$work/stop.ckpt" --data "$data" --steps 1 --batch 2 --threads 1 >"$work/resume.log" 2>&1 ||
  fail "cannot resume from the checkpoint: $(tail -1 "$work/resume.log")"
next=$((step + 1))
grep -Eq "^step +$next/$next " "$work/resume.log" || fail "the resumed run did not start at step $next"
echo "interrupt.sh: stopped after step $step; profile read back, resumed at step $next"
