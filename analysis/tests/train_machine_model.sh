#!/usr/bin/env bash
# train_machine_model.sh TRAIN REPLAY REPORT OUT DATA -- MPIRUN...: the machine model a profile
# records. MPIRUN 2 TRAIN --machine-probe --profile (tiny, 3 steps) detects the model at start-up as
# commscope-bench does and records its text form in the profile's /meta/attributes machine_model;
# its replay with --gaps none times the calls alone; commscope-report profile P --alone R, with no
# --bench file and no --machine, prices every collective of the step on the profile's model:
# step_communication.csv has an expected_ms above 0 for each collective row, and the report names
# the profile's model, measured by commscope-train at start-up, as the source.
# Exit 0, or 1 naming the check that failed.
set -euo pipefail
train=$1 replay=$2 report=$3 out=$4 data=$5
shift 5
[ "${1:-}" = -- ] && shift
fail() {
  echo "train_machine_model: $1" >&2
  exit 1
}
rm -rf "$out"
mkdir -p "$out"
"$@" 2 "$train" --model tiny --steps 3 --batch 2 --threads 1 --data "$data" --machine-probe \
  --profile "$out/p.h5" >"$out/train.log" 2>&1 || fail "the run exited with status $? (log: $out/train.log)"
probe=$(grep "^machine model: detected at start-up" "$out/train.log") ||
  fail "the run did not say it detected the machine model (log: $out/train.log)"
echo "train_machine_model: $probe"
h5dump -a /meta/attributes/machine_model "$out/p.h5" >"$out/model.txt" 2>&1 ||
  fail "the profile has no /meta/attributes machine_model ($out/model.txt)"
grep -q 'node host=' "$out/model.txt" || fail "the profile's machine_model names no node ($out/model.txt)"
grep -q 'latency_us=' "$out/model.txt" || fail "the profile's machine_model has no latency ($out/model.txt)"
"$@" 2 "$replay" "$out/p.h5" -o "$out/r.h5" --gaps none >"$out/replay.log" 2>&1 ||
  fail "commscope-replay exited with status $? (log: $out/replay.log)"
# The replay keeps the original's attributes but not its machine model (it may run elsewhere).
h5dump -a /meta/attributes/machine_model "$out/r.h5" >/dev/null 2>&1 &&
  fail "the replay carries the original run's machine_model"
"$report" profile "$out/p.h5" --alone "$out/r.h5" -o "$out/report" >"$out/report.log" 2>&1 ||
  fail "commscope-report profile exited with status $? (log: $out/report.log)"
note=$(grep "^expected: " "$out/report.log") || fail "the report names no model for expected ($out/report.log)"
echo "train_machine_model: $note"
case "$note" in
  "expected: the profile's machine model, measured by commscope-train at start-up"*) ;;
  *) fail "the report does not name the profile's model as the source: $note" ;;
esac
python3 - "$out/report/step_communication.csv" <<'PY' || fail "step_communication.csv: above"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
bad = []
priced = 0
for r in rows:
    print("train_machine_model: %s %s %s at %s B: expected %s ms, alone %s ms (%s), in the step %s ms" %
          (r["group"], r["call"], r["algorithm"], r["size_bytes"], r["expected_ms"] or "-", r["alone_ms"] or "-",
           r["alone_basis"], r["in_step_ms"]))
    try:
        ok = float(r["expected_ms"]) > 0
    except ValueError:
        ok = False
    if ok:
        priced += 1
    else:
        bad.append("%s on %s at %s B has no expected time: %s" % (r["call"], r["group"], r["size_bytes"],
                                                                    r["expected_basis"]))
if not rows:
    bad.append("no rows")
for b in bad:
    print("train_machine_model: " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
echo "train_machine_model: ok"
