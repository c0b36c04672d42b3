#!/usr/bin/env bash
# commscope-bench --from-profile on the trainer's profiles (data parallel at 2 ranks, ZeRO-3 at 2,
# tp 2 with sequence parallelism at 2, tp 2 x pp 2 at 4), one bench run at the profile's own rank
# count each (its smaller communicators rebuilt as groups of the run, every group at once: the
# 1-rank dp groups of tp 2, the 2-rank tp, pp and embedding groups of tp 2 x pp 2): the bench file
# gives every collective call of the profile its row, and commscope-report profile --bench sets
# each against it (alone_basis "measured at ..."); the rows add up to the breakdown's
# communication. A profile whose communicators fit none of the run's groups is refused in one line
# (exit 2).
#   from_profile.sh BINDIR FIXTURES WORKDIR MPIEXEC [FLAGS...]
set -u
bin=$1 fixtures=$2 work=$3
shift 3
me=from_profile.sh
fail() { echo "$me: FAIL: $*"; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
export OMP_NUM_THREADS=1
rm -rf "$work" && mkdir -p "$work" || exit 1
"$@" -np 2 "$bin/commscope-train" --model tiny --steps 3 --batch 4 --threads 1 --dp zero3 \
  --data "$here/../../trainer/tests/data/tiny.txt" --profile "$work/zero3-np2.h5" >"$work/zero3.log" 2>&1 ||
  fail "commscope-train --dp zero3 exited $? (log: $work/zero3.log)"
"$@" -np 2 "$bin/commscope-train" --model tiny --steps 3 --batch 4 --threads 1 --tp 2 --sp \
  --data "$here/../../trainer/tests/data/tiny.txt" --profile "$work/tp2sp-np2.h5" >"$work/tp2sp.log" 2>&1 ||
  fail "commscope-train --tp 2 --sp exited $? (log: $work/tp2sp.log)"
# bench NAME PROFILE NP: the profile's calls of NP ranks into $work/NAME-bench-npNP.h5.
bench() {
  local launch=("$@")
  launch=("${launch[@]:3}")
  if [ "$3" = 1 ]; then launch=(); else launch+=(-np "$3"); fi
  "${launch[@]}" "$bin/commscope-bench" --from-profile "$2" -n 2 -w 1 -c 1 --out "$work/$1-bench-np$3.h5" \
    >"$work/$1-bench-np$3.log" 2>&1 || fail "commscope-bench --from-profile $2 at $3 ranks exited $? (log: $work/$1-bench-np$3.log)"
  files+=(--bench "$work/$1-bench-np$3.h5")
}
for case in "ddp|$fixtures/train-np2.h5|2" "zero3|$work/zero3-np2.h5|2" "tp2sp|$work/tp2sp-np2.h5|2" \
  "tp2pp2|$fixtures/train3d-np4.h5|4"; do
  IFS='|' read -r name profile sizes <<<"$case"
  files=()
  for np in $sizes; do bench "$name" "$profile" "$np" "$@"; done
  out=$("$bin/commscope-report" profile "$profile" "${files[@]}" -o "$work/$name-report" 2>&1) ||
    fail "$name: commscope-report profile exited $?: $(tail -1 <<<"$out")"
  grep -q "The rows add up to the breakdown's communication exactly" <<<"$out" || fail "$name: the rows do not add up"
  csv=$work/$name-report/step_communication.csv
  # Every collective row (a bench collective's name) has its measured row.
  read -r rows missing < <(python3 - "$csv" <<'PY'
import csv, sys
collectives = {"allreduce", "allgather", "reducescatter", "reduce", "broadcast", "alltoall", "gather", "scatter"}
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["call"] in collectives]
missing = [r["group"] + " " + r["call"] + " " + r["size_bytes"] + ": " + r["alone_basis"]
           for r in rows if not r["alone_basis"].startswith("measured at ")]
# A call on one rank moves nothing: no expected time and no verdict (not "far below").
missing += [r["group"] + " " + r["call"] + " " + r["size_bytes"] + ": judged " + r["verdict"]
            for r in rows if r["ranks"] == "1" and (r["verdict"] != "-" or r["expected_ms"] != "-")]
print(len(rows), "; ".join(missing).replace(" ", "_") or "-")
PY
  )
  [ "$missing" = - ] || fail "$name: calls without their bench row, or one-rank calls judged: ${missing//_/ }"
  [ "${rows:-0}" -gt 0 ] || fail "$name: no collective call in $csv"
  echo "$me: $name: $rows kinds of collective call, each with its bench row; $(grep "^The step's communication" <<<"$out")"
done
# A profile of 2-rank communicators benched at 3 ranks: one line, exit 2.
out=$("$@" -np 3 "$bin/commscope-bench" --from-profile "$fixtures/train-np2.h5" -n 2 2>&1)
rc=$?
line=$(grep "^commscope-bench:" <<<"$out" | head -1)
[ $rc != 0 ] && grep -q "none of its collective calls runs on 3 ranks" <<<"$line" ||
  fail "a 2-rank profile at 3 ranks: exit $rc, '$line'; refused in one line wanted"
echo "$me: ok"
