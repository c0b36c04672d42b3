#!/usr/bin/env bash
# One node: the shm allreduce at 64 MiB on 2 ranks set against the memcpy-derived limit. A one-node
# doctor run first (its file to --doctor, as the suite gives it), then the bench (ring too: shm has
# no message of its own, so the ring's 1 KiB row gives the run's own latency per message while the
# model records none), then commscope-report bench -o. The test works out the verdict's figure
# itself, from the results' busbw at the typical call (-J's time and, with -I 1, its median
# iteration: the lower of the two) and the rates by size of the header's model (/meta
# machine_model, as written), with shm's terms from docs/verdicts.md and collective_model.hpp:
#   2 ranks, n = 64 MiB >= the two-shot threshold (64 KiB on 2 ranks), chunks of 256 KiB:
#   k = n / 256 KiB = 256 steps; A = 2k = 512, B = (2p-1)/p = 1.5 (into the slots n, out of them
#   n/2: shm_slot_copies), G = (p-1)/p = 0.5; each rate read off its curve (log2-interpolated, the
#   nearest end beyond it) at a rank's working set, 2n, the reduction's too (reduce_slot: the bench
#   measures it summing the slots the previous rank just wrote, as shm's reductions do):
#   t = A a + n / copy_in(2n) + n/2 / copy_out(2n) + n/2 / reduce_slot(2n);
#   expected_busbw = 2(p-1)/p n / t = n / t; of_expected = busbw /
#   expected_busbw; a = the model's latency_us as the header writes it (full precision; the
#   report prints 3 digits, which is not enough when the latency term is large), else the min over
#   the smallest size's rows of time / messages (ring on 2 ranks: 2(p-1) = 2 messages; shm none).
# It must equal the report's CSV cells to the printed digit (expected_busbw 4, of_expected 3
# significant digits), the rates measured again at the end of the run (--reprobe-after 0: the header's
# curves are the faster of the two moments). --shm-adapt never: every call takes the segment, the algorithm the terms
# price (from 256 KiB the bench's default picks the faster of the segment and direct reads per
# call, and the model prices the faster of the two); the results header records it, and the
# bench and the report price the segment alone. Exit 77 without hdf5-tools' h5dump.
#   verdict_shm.sh WORKDIR REPORT BENCH DOCTOR -- LAUNCHER... (2 ranks)
set -u
work=$1 report=$2 bench=$3 doctor=$4
shift 4
[ "$1" = "--" ] && shift
me=verdict_shm.sh
command -v h5dump >/dev/null || { echo "$me: no h5dump: skipped"; exit 77; }
fail() { echo "$me: FAIL: $*"; exit 1; }
d=$work/verdict-shm-doctor.h5 b=$work/verdict-shm.h5 j=$work/verdict-shm.json out=$work/verdict-shm-report
m=$work/verdict-shm-machine.txt
# A rate between the ranks far above the copies': shm's direct reads would price far below its
# slots, so a model that let the library choose (--shm-adapt's default) would take them; the run
# says never, and the price must be the slots' (the bench records it, the report reads it back).
echo 'node host=* intra=1000GB/s' >"$m"
rm -rf "$d" "$b" "$j" "$j".* "$out"
"$@" "$doctor" --no-probes --no-nodes --passes 2 --bytes 256K --bw-iters 2 --lat-iters 20 -o "$d" \
  >"$work/verdict-shm-doctor.log" 2>&1 || fail "the doctor exited $? (log: $work/verdict-shm-doctor.log)"
n=$((64 * 1024 * 1024))
"$@" "$bench" allreduce --algo ring,shm -b 1K -e 64M -i $((n - 1024)) -n 5 -w 2 -I 1 --shm-adapt never --doctor "$d" --machine "$m" \
  --reprobe-after 0 --out "$b" -J "$j" >"$work/verdict-shm-bench.log" 2>&1 || fail "the bench exited $? (log: $work/verdict-shm-bench.log)"
"$report" bench "$b" -o "$out" >"$work/verdict-shm-report.log" 2>&1 || fail "the report exited $?"
model=$(h5dump -a /meta/machine_model "$b") || fail "no /meta machine_model in $b"
# --reprobe-after 0: the rates by size measured again at the end, the header's curves the faster of the two.
case $model in *"measured again at the end of the run"*) ;; *) fail "the rates were not measured again at the end: $model" ;; esac
python3 - "$j" "$out/allreduce.csv" "$out/report.md" "$n" "$model" <<'PY'
import csv, json, math, re, sys
jpath, cpath, rpath, n, model = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5]
def curve(key):
    m = re.search(r" " + key + r"\.curve=(\S+)", model)
    if not m:
        sys.exit(f"verdict_shm.sh: FAIL: no {key}.curve in the header's model: {model}")
    return [tuple(map(float, p.split(":"))) for p in m.group(1).split(",")]
def rate_at(c, b):
    if b <= c[0][0]:
        return c[0][1]
    if b >= c[-1][0]:
        return c[-1][1]
    i = next(i for i in range(1, len(c)) if c[i][0] >= b)
    t = math.log2(b / c[i - 1][0]) / math.log2(c[i][0] / c[i - 1][0])
    return c[i - 1][1] + t * (c[i][1] - c[i - 1][1])
rin, rout, red = rate_at(curve("copy_in"), 2 * n), rate_at(curve("copy_out"), 2 * n), rate_at(curve("reduce_slot"), 2 * n)
rows = json.load(open(jpath))["results"]
p = 2
def row(algo, size):
    return next(r for r in rows if r["algorithm"] == algo and r["size"] == size)
note = open(rpath).read()
stated = re.search(r"Latency per message: ([^.]*?), ([0-9.e+-]+) us", note)
assert stated, "the report states no latency per message"
header_alpha = re.search(r"latency_us=([0-9.e+-]+)", model)
if header_alpha:  # the model's own latency, read at full precision from the header
    alpha = float(header_alpha.group(1))
elif stated.group(1) == "the run's own smallest time per message":
    smallest = min(r["size"] for r in rows)
    # ring allreduce: 2(p-1) messages; shm's handoffs are no message (not counted).
    alpha = min(r["out_of_place"]["time"] / (2 * (p - 1)) for r in rows if r["size"] == smallest and r["algorithm"] == "ring")
else:
    sys.exit("verdict_shm.sh: FAIL: the report states a latency the header's model does not hold")
k = math.ceil(n / 262144)
A, B, G = 2 * k, (2 * p - 1) / p, (p - 1) / p
moved = n / (rin * 1e3) + n / 2 / (rout * 1e3) + G * n / (red * 1e3)  # us; GB/s = 1e3 B/us
t = A * alpha + moved
expected_busbw = 2 * (p - 1) / p * n / (t * 1e3)
# The row is judged by its typical call: the lower of its mean (time) and its median iteration.
shm = row("shm", int(n))
mean, p50 = shm["out_of_place"]["time"], shm["out_of_place_per_iter"]["p50_us"]
typical = p50 if 0 < p50 < mean else mean
busbw = shm["out_of_place"]["bus_bw"] * mean / typical
of = busbw / expected_busbw
with open(cpath, newline="") as f:
    cells = next(r for r in csv.DictReader(f) if r["size_bytes"] == str(int(n)))
print(f"verdict_shm.sh: copy_in {rin:.6g}, copy_out {rout:.6g}, reduce_slot {red:.6g} GB/s, alpha {alpha:.6g} us ({stated.group(1)}),"
      f" t = {A} a + n / copy_in + n/2 / copy_out + n/2 / reduce_slot = {A * alpha:.6g} + {moved:.6g} = {t:.6g} us")
print(f"verdict_shm.sh: shm at 64 MiB: busbw {busbw:.6g} GB/s, expected_busbw {expected_busbw:.6g}, of_expected {of:.6g};"
      f" the report's {cells['shm_expected_busbw']}, {cells['shm_of_expected']}")
def same(mine, printed, sig):
    if printed == "-":
        return False
    return float(f"{mine:.{sig}g}") == float(printed)
ok = same(of, cells["shm_of_expected"], 3) and same(expected_busbw, cells["shm_expected_busbw"], 4)
print("verdict_shm.sh: ok" if ok else "verdict_shm.sh: FAIL: the report's figures differ from the test's")
sys.exit(0 if ok else 1)
PY
