#!/usr/bin/env bash
# The machine model a bench run records, on this machine: the header of the results file and the
# -J file hold a model with this host, its ranks and online CPUs and a positive measured copy rate
# and intra rate with their rates by size, the latency the start-up measured (its `machine` line),
# the user's --link-rate and --machine figures over the detected ones (a machine-file line naming
# no host of the run is warned about), how far each probe moved and the nodes' load over the run
# (rewritten into the header at the end), and `commscope-report bench` shows them in its Machine
# section (each rate by size with how far it moved, 0 here: the run is not measured again). Exit 77
# (skipped) without a python3 with h5py ($H5PY_PYTHON, else python3).
#   machine_model.sh WORKDIR REPORT -- launcher-and-bench... (2 ranks)
set -u
work=$1 report=$2
shift 2
[ "$1" = "--" ] && shift
py=${H5PY_PYTHON:-python3}
"$py" -c 'import h5py' 2>/dev/null || { echo "machine_model.sh: no python3 h5py: skipped"; exit 77; }
fail() { echo "machine_model.sh: FAIL: $*"; exit 1; }
out=$work/machine.h5 json=$work/machine.json mfile=$work/machine.txt
rm -f "$out" "$json" "$json".*
printf '# the cluster\nnode host=* nic=100mbit\nnode host=elsewhere cpus=64\n' >"$mfile"
log=$("$@" allreduce -b 1K -e 4K -n 2 -w 1 --algo ring --out "$out" -J "$json" --machine "$mfile" \
        --link-rate "$(hostname)=1gbit" 2>&1) || fail "the bench exited $?: $log"
printf '%s\n' "$log" | grep -E '^# machine: ' || fail "no '# machine:' line in the header"
printf '%s\n' "$log" | grep -Eq "^# machine: [^ ]+ during the run: 2 ranks (\(which had [0-9.e+-]+ CPUs?( of the [0-9.e+-]+ they were ready to use)?\) )?(and other processes' [0-9.e+-]+ CPUs? )?on [0-9]+ CPUs?, load average " ||
  fail "no '# machine: HOST during the run' line at the end"
printf '%s\n' "$log" | grep -q "^# machine: WARNING: --machine $mfile line 3 names host 'elsewhere', which this run has not$" ||
  fail "no warning for the line naming another host"
"$py" - "$out" "$json" "$(hostname)" "$(getconf _NPROCESSORS_ONLN)" <<'PY' || exit 1
import h5py, json, re, sys
path, jpath, host, cpus = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
text = h5py.File(path, "r")["meta"].attrs["machine_model"]
text = text.decode() if isinstance(text, bytes) else text
print(text)
lines = [l for l in text.splitlines() if l.startswith("node ")]
assert len(lines) == 1, f"one node expected: {lines}"
# The start-up probes: the latency (8 B ping-pong) and the rate between the node's two ranks.
machine = [l for l in text.splitlines() if l.startswith("machine ")]
assert len(machine) == 1, f"one machine line expected: {text}"
m = dict(re.findall(r'(\S+?)=("(?:[^"\\]|\\.)*"|\S+)', machine[0]))
assert m["latency.source"] == "measured" and float(m["latency_us"]) > 0, m
assert m["latency.detail"].startswith('"8 B ping-pong'), m
fields = dict(re.findall(r'(\S+?)=("(?:[^"\\]|\\.)*"|\S+)', lines[0]))
assert fields["host"] == host, fields
assert int(fields["ranks"]) == 2 and int(fields["cpus"]) == cpus, fields
assert fields["copy.source"] == "measured" and float(fields["copy"].removesuffix("GB/s")) > 0, fields
assert fields["intra.source"] == "measured" and fields["intra.detail"].startswith('"ring exchange among its 2 ranks at once, per flow, '), fields
assert fields["intra_one.source"] == "measured" and fields["intra_one.detail"].startswith('"ping-pong between two of its ranks, the others idle, '), fields
# A message's call alone: each rank's exchange of 8 B with itself, one point (16 B of buffers).
assert fields["self_exchange.source"] == "measured" and fields["self_exchange.detail"].startswith('"MPI_Sendrecv of 8 B with its own rank, every rank at once'), fields
assert [float(x) for x in fields["self_exchange.curve"].split(":")][0] == 16 and "," not in fields["self_exchange.curve"], fields
# The rates by size (docs/verdicts.md, "The rate of a size"): from 16 KiB to past the caches,
# sizes ascending, every rate positive; the rates between ranks also from messages of 8 B (16 B
# of buffers) by 2x below it, where protocols change, and are their largest size's (copy's own
# figure is one rank's memcpy alone, its curve every rank's at once).
# On 2 ranks the slots go from core to core, as shm's do: into a rank's own, out of (and summed
# from) the previous rank's.
assert fields["copy_in.detail"].startswith('"memcpy from its buffer into a 256 KiB slot in the caches that the next rank then reads'), fields
assert fields["copy_out.detail"].startswith('"from the previous rank\'s 256 KiB slot in the caches just written'), fields
assert fields["reduce_slot.detail"].startswith('"f32 sums of the previous rank\'s 256 KiB slot'), fields
for k in ("copy", "intra", "intra_one", "copy_in", "copy_out", "reduce_slot"):
    points = [tuple(map(float, p.split(":"))) for p in fields[k + ".curve"].split(",")]
    sizes = [b for b, _ in points]
    small = [16 << i for i in range(10)] if k in ("intra", "intra_one") else []
    assert len(points) >= 4 + len(small) and sizes[:len(small) + 1] == small + [16384], (k, points)
    assert sizes == sorted(set(sizes)), (k, points)
    assert all(r > 0 for _, r in points), (k, points)
    assert k == "copy" or abs(points[-1][1] - float(fields[k].removesuffix("GB/s"))) <= 1e-3 * points[-1][1], (k, points, fields[k])
# How far each probe's repeats moved (written where above 0) and the load over the run, which the
# header records at the end of the run (docs/verdicts.md).
for k in ("copy.spread", "intra.spread"):
    assert 0 <= float(fields.get(k, "0")) < 1, fields
assert 0 <= float(m.get("latency.spread", "0")) < 1, m
assert float(fields["load.seconds"]) > 0 and float(fields["load.others_cpus"]) >= 0, fields
assert float(fields["load.loadavg_start"]) >= 0 and float(fields["load.loadavg_end"]) >= 0, fields
assert 0 < float(fields["load.ranks_cpus"]) <= cpus + 0.5, fields
assert fields["nic"] == "0.125GB/s" and fields["nic.source"] == "user", fields  # --link-rate after the file's *
assert fields["nic.detail"] == f'"--link-rate {host}=1gbit"', fields
model = json.load(open(jpath))["config"]["machine_model"]
assert model[0]["host"] == host and model[0]["nic"]["GBps"] == 0.125 and model[0]["copy"]["GBps"] > 0, model
assert model[0]["nic_measured"]["GBps"] is None, model
PY
rep=$("$report" bench "$out" 2>&1) || fail "the report exited $?: $rep"
printf '%s\n' "$rep" | sed -n '/^Machine$/,/^What each figure is/p'
printf '%s\n' "$rep" | grep -Eq "^$(hostname) +2 +$(getconf _NPROCESSORS_ONLN) +0 +[0-9.]+ +measured +[0-9.]+ +measured +0\.125 +user +- +none$" ||
  fail "the report's Machine section lacks the node's row"
printf '%s\n' "$rep" | grep -q "$(hostname) nic: --link-rate $(hostname)=1gbit" || fail "the report does not say what the nic figure is"
printf '%s\n' "$rep" | grep -Eq "^$(hostname) +intra_one +16 KiB +[0-9.]+ +[0-9.]+$" || fail "the report's Machine section lacks the rates by size"
printf '%s\n' "$rep" | grep -Eq "^$(hostname) +reduce_slot +16 KiB +[0-9.]+ +[0-9.]+$" || fail "the report's rates by size lack reduce_slot"
echo "machine_model.sh: ok"
