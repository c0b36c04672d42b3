#!/usr/bin/env bash
# The rows against the machine model (docs/verdicts.md), as the bench writes them and as
# commscope-report bench recomputes them: every out-of-place row's expected_busbw_GBps and
# of_expected in the results file (read with test_bench_readback --expected) and in the -J file
# equal the report's CSV columns to the printed digit, the -J figures equal the file's, and the
# bench's own "# Verdict:" lines after its footer are the report's "Verdict:" lines. One rank (a
# copy at the copy rate: every figure known) and two with a machine file (where the recorded model
# lacks the latency per message, the file's figures are NaN and the report takes the run's own).
# Exit 77 (skipped) without python3.
#   expected_columns.sh WORKDIR REPORT READBACK -- launcher... -np BENCH   (the rank count goes after -np)
set -u
work=$1 report=$2 readback=$3
shift 3
[ "$1" = "--" ] && shift
launcher=("${@:1:$#-1}") bench=${*: -1}
py=$(command -v python3) || { echo "expected_columns.sh: no python3: skipped"; exit 77; }
fail() { echo "expected_columns.sh: FAIL: $*"; exit 1; }

# check NAME RANKS BENCH-ARGS...
check() {
  local name=$1 np=$2 log
  shift 2
  local out=$work/expected-$name.h5 json=$work/expected-$name.json dir=$work/expected-$name.report
  rm -rf "$out" "$json" "$json".* "$dir"
  log=$("${launcher[@]}" "$np" "$bench" "$@" --out "$out" -J "$json" 2>&1) || fail "$name: the bench exited $?: $log"
  "$report" bench "$out" -o "$dir" >"$dir.txt" 2>&1 || fail "$name: the report exited $?: $(cat "$dir.txt")"
  "$readback" "$out" --expected >"$dir.expected" || fail "$name: readback exited $?"
  printf '%s\n' "$log" | sed -n 's/^# Verdict: //p' >"$dir.bench-verdicts"
  sed -n 's/^Verdict: //p' "$dir.txt" >"$dir.report-verdicts"
  [ -s "$dir.bench-verdicts" ] || fail "$name: no '# Verdict:' line after the bench's footer: $log"
  diff "$dir.bench-verdicts" "$dir.report-verdicts" || fail "$name: the bench's verdict lines are not the report's"
  "$py" - "$dir" "$json" "$np" <<'PY' || fail "$name: the figures differ"
import csv, glob, json, math, os, sys
d, jpath, nranks = sys.argv[1], sys.argv[2], int(sys.argv[3])
own_latency = "Latency per message: the run's own" in open(d + ".txt").read()
rows = [l.split() for l in open(d + ".expected")]
js = {}
for line in json.load(open(jpath))["results"]:
    for side, ip in (("out_of_place", "0"), ("in_place", "1")):
        if line.get(side):
            js[(line["collective"], line["algorithm"], str(line["size"]), ip)] = line[side]
def same(x, printed, n):  # x printed to n significant digits (the report prints whole numbers whole: 2162)
    p = float(printed)
    return abs(x - p) <= 0.5 * 10 ** (math.floor(math.log10(abs(x))) - n + 1) * (1 + 1e-9) if x else p == 0
finite = 0
for coll, algo, size, ip, t, bw, of in rows:
    t, bw, of = float(t), float(bw), float(of)
    j = js[(coll, algo, size, ip)]
    for key, v in (("expected_time", t), ("expected_bus_bw", bw), ("of_expected", of)):
        assert (j[key] is None) == math.isnan(v), (coll, algo, size, ip, key, j[key], v)
        assert j[key] is None or math.isclose(j[key], v, rel_tol=1e-9), (key, j[key], v)
    if ip == "1":
        continue
    table = {r["size_bytes"]: r for r in csv.DictReader(open(os.path.join(d, coll + ".csv")))}
    r = table[size]
    if math.isnan(of):
        assert nranks > 1 and own_latency, f"{coll} {algo} {size}: NaN in the file, {r[algo + '_of_expected']} in the report"
        continue
    finite += 1
    assert same(of, r[algo + "_of_expected"], 3), (coll, algo, size, of, r[algo + "_of_expected"])
    if math.isnan(bw):
        assert r[algo + "_expected_busbw"] == "-", (coll, algo, size, r)
    else:
        assert same(bw, r[algo + "_expected_busbw"], 4), (coll, algo, size, bw, r[algo + "_expected_busbw"])
assert nranks > 1 or finite == len([x for x in rows if x[3] == "0"]) > 0, f"{finite} rows judged on one rank"
print(f"{d}: {len(rows)} rows, {finite} judged out-of-place rows equal to the report's to the printed digit")
PY
}

check one 1 broadcast -b 1K -e 1M -f 8 -n 3 -w 1 --algo ring
printf 'node host=* copy=8GB/s\n' >"$work/expected-machine.txt"
check two 2 allreduce -b 8 -e 256K -f 8 -n 3 -w 1 --algo ring,rhd --machine "$work/expected-machine.txt"
echo "expected_columns.sh: ok"
