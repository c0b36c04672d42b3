#!/usr/bin/env bash
# Ctrl-C on mpirun itself during a step that outlasts mpirun's patience: mpirun forwards SIGTERM to
# the ranks and SIGKILLs them about 1 s later, and the step in progress (the hidden
# --debug-stall-step makes step 4 sleep 60 s on every rank) never ends. The profile must be on disk
# under its final name with the 3 steps before of every rank, rank 0 must say so ("kept 3 steps in
# FILE"), no FILE.partial may be left, and the report must read it. (It was written after the step
# in progress, which the SIGKILL never let end: nothing was on disk.)
#   interrupt_mpirun.sh TRAIN REPORT DATA WORKDIR RANKS -- launcher...   (the launcher takes -np RANKS)
set -u
train=$1 report=$2 data=$3 work=$4 ranks=$5
shift 5
[ "$1" = "--" ] && shift
mkdir -p "$work"
out=$work/stop.np$ranks.h5
rm -f "$out" "$out.partial"
log=$work/stop.np$ranks.log
"$@" "$ranks" "$train" --model tiny --data "$data" --steps 100 --batch 6 --threads 1 --debug-stall-step 3 \
  --profile "$out" >"$log" 2>&1 &
pid=$!
# Each step is appended to the profile before its line is printed; step 4 then stalls.
for _ in $(seq 1200); do
  grep -q '^step  *3/' "$log" && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.1
done
kill -INT $pid
wait $pid
rc=$?
cat "$log"
echo "interrupt_mpirun.sh: exit status $rc after SIGINT to the launcher"
fail() { echo "interrupt_mpirun.sh: FAIL: $*"; exit 1; }
[ "$rc" -ne 0 ] || fail "an interrupted run must not exit 0"
[ -e "$out" ] || fail "no $out"
[ -e "$out.partial" ] && fail "$out.partial was left behind"
grep -q "^commscope-train: rank 0: kept 3 steps in $out\$" "$log" || fail "no 'kept 3 steps in $out' from rank 0"
"$report" profile "$out" >"$work/stop.np$ranks.txt" || fail "the report cannot read the profile"
grep -q "^$ranks ranks, $((3 * ranks)) (rank, iteration) rows" "$work/stop.np$ranks.txt" ||
  fail "the profile does not hold 3 steps of $ranks ranks: $(grep ' ranks, ' "$work/stop.np$ranks.txt")"
echo "interrupt_mpirun.sh: 3 steps of $ranks ranks kept and read back"
