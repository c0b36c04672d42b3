#!/usr/bin/env bash
# pp_waiting.sh TRAIN REPORT BENCH OUT DATA -- MPIRUN...: who a pipeline's receives wait for. MPIRUN
# 2 TRAIN --pp 2 (tiny, 2 micro-batches, 3 steps) is profiled, then commscope-report profile --bench
# BENCH reads it. Stage 0 receives the gradients of pp[1>0] before its backward, and stage 1 makes
# them from a micro-batch's forward, the head and its backward while stage 0 runs one forward: it
# waits for rank 1 every step, so waiting_for.csv has a row of that pp.recv with rank 1 (the
# sender) as the rank waited for, rank 0 as waiting_rank, their stages 1 and 0 and a backward
# operator (.bwd) among what rank 1 ran meanwhile. Stage 1's wait for the activations of pp[0>1]
# is a race with its own optimizer step (2 of 6 messages in a quiet run, none in a CI run of a
# busy machine): where it has a row, the row names rank 0 and a forward (.fwd). Every pp.recv row
# names its link's sender and receiver so; the summary says it in words, each receive's wait for
# its link's sender ("rank 0 (stage 0) waits ... in pp.recv on pp[1>0] for rank 1 (stage 1)"), one
# at least; the rows still add up to the breakdown's communication.
# Exit 0, or 1 naming the check that failed.
set -euo pipefail
train=$1 report=$2 bench=$3 out=$4 data=$5
shift 5
[ "${1:-}" = -- ] && shift
fail() {
  echo "pp_waiting: $1" >&2
  exit 1
}
rm -rf "$out"
mkdir -p "$out"
"$@" 2 "$train" --model tiny --pp 2 --micro-batches 2 --steps 3 --batch 4 --threads 1 --data "$data" \
  --profile "$out/pp.h5" >"$out/train.log" 2>&1 || fail "the pp 2 run exited with status $? (log: $out/train.log)"
"$report" profile "$out/pp.h5" --bench "$bench" -o "$out/report" >"$out/report.log" 2>&1 ||
  fail "commscope-report profile exited with status $? (log: $out/report.log)"
grep -q "The rows add up to the breakdown's communication exactly." "$out/report.log" ||
  fail "the rows do not add up to the breakdown's communication"
summary=$(grep "^The step's communication" "$out/report.log") || fail "no summary paragraph in $out/report.log"
echo "pp_waiting: $summary"
python3 - "$summary" <<'PY' || fail "the summary does not say which stage a receive waits for: above"
import re, sys
said = re.findall(r"rank (\d+) \(stage (\d+)\) waits [0-9.e-]+ ms a step in pp\.recv on pp\[(\d+)>(\d+)\] for rank (\d+) "
                  r"\(stage (\d+)\)", sys.argv[1])
wrong = [s for s in said if (s[0], s[1], s[4], s[5]) != (s[3], s[3], s[2], s[2])]
print("pp_waiting: the summary names %d receive waits, %d of them not the link's sender" % (len(said), len(wrong)))
sys.exit(0 if said and not wrong else 1)
PY
python3 - "$out/report/waiting_for.csv" <<'PY' || fail "waiting_for.csv: above"
import csv, re, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["call"] == "pp.recv"]
for r in rows:
    print("pp_waiting: %s on %s: rank %s (stage %s) waits %s ms a step for rank %s (stage %s), which ran %s" %
          (r["call"], r["group"], r.get("waiting_rank"), r.get("waiting_stage"), r.get("waiting_rank_wait_per_step_ms"),
           r["rank"], r.get("stage"), r["running_meanwhile"]))
bad = []
for r in rows:
    sender, receiver = re.fullmatch(r"pp\[(\d+)>(\d+)\]", r["group"]).groups()
    if (r["rank"], r.get("waiting_rank"), r.get("stage"), r.get("waiting_stage")) != (sender, receiver, sender, receiver):
        bad.append("%s on %s: waited for rank %s by rank %s" % (r["call"], r["group"], r["rank"], r.get("waiting_rank")))
grads = [r for r in rows if r["group"] == "pp[1>0]"]
if not grads:
    bad.append("no row of pp.recv on pp[1>0] (stage 0 waiting for stage 1's gradients)")
elif ".bwd" not in grads[0]["running_meanwhile"]:
    bad.append("rank 1 ran no backward while rank 0 waited: %s" % grads[0]["running_meanwhile"])
for r in rows:
    if r["group"] == "pp[0>1]" and ".fwd" not in r["running_meanwhile"]:
        bad.append("rank 0 ran no forward while rank 1 waited: %s" % r["running_meanwhile"])
for b in bad:
    print("pp_waiting: " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
echo "pp_waiting: ok"
