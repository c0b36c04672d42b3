#!/usr/bin/env bash
# scaling_shared_machine.sh PYTHON CHECK OUT REPORT NP1 NP4: the emulated cluster's case. NP4's
# 4 ranks rewritten (h5py) as an emulated cluster's: 4 hosts (host1..host4) of one 2-CPU machine
# (one boot id), 2 threads each, free on CPUs 0-1; NP1's rank as one of them. The scaling report
# counts the cores the ranks had, 2, not 4 hosts x 2 CPUs = 8 (parallel efficiency 1.84% on the
# emulated-cluster suite), says the hosts are one machine, and scripts/check-report.py agrees.
# Without the placement (a file from before it was recorded) the attributes' rule gives 8, and
# the report says that file records no placement. Skipped (77) without a Python with h5py.
set -u
python=$1 check=$2 out=$3 report=$4 np1=$5 np4=$6
fail() { echo "scaling_shared_machine.sh: FAIL: $*"; exit 1; }
[ -n "$python" ] && "$python" -c 'import h5py' 2>/dev/null || { echo "skipped: no python3 with h5py"; exit 77; }
rm -rf "$out" && mkdir -p "$out" || fail "cannot create $out"
cp "$np1" "$out/np1.h5" && cp "$np4" "$out/np4.h5" && cp "$np4" "$out/np4-unplaced.h5" || fail "cannot copy"
"$python" - "$out" <<'PY' || fail "cannot rewrite the profiles"
import sys
import h5py
import numpy as np

out = sys.argv[1]
for name in ("np1", "np4", "np4-unplaced"):
    with h5py.File(f"{out}/{name}.h5", "r+") as f:
        ranks = f["ranks"][:]
        for i in range(len(ranks)):
            ranks[i]["host"] = f"host{i + 1}".encode()
            ranks[i]["machine"] = b"one-boot-id"
            ranks[i]["cpus"], ranks[i]["cpu_count"], ranks[i]["node_cpus"] = b"0-1", 2, 2
        if name == "np4-unplaced":  # a file from before the placement: no cpus, cpu_count, node_cpus, machine
            keep = [n for n in ranks.dtype.names if n not in ("cpus", "cpu_count", "node_cpus", "machine")]
            ranks = np.array([tuple(r[n] for n in keep) for r in ranks], dtype=[(n, ranks.dtype[n]) for n in keep])
        del f["ranks"]
        f.create_dataset("ranks", data=ranks, maxshape=(None,), chunks=True)
        attributes = f["meta"]["attributes"].attrs
        attributes["threads"], attributes["node_cpus"] = "2", "2"
PY
"$report" scaling "$out/np1.h5" "$out/np4.h5" -o "$out/placed" > /dev/null || fail "the report exited with status $?"
grep -q '^4,.(4,1,1).,2,' "$out/placed/scaling.csv" ||
  fail "scaling.csv does not give 4 ranks on 4 hosts of one 2-CPU machine 2 cores: $(grep '^4,' "$out/placed/scaling.csv")"
grep -q '4 hosts on 1 machine' "$out/placed/report.md" || fail "report.md does not say the 4 hosts are 1 machine"
"$python" "$check" scaling "$out/np1.h5" "$out/np4.h5" "$out/placed" || fail "check-report.py disagrees (placed)"
"$report" scaling "$out/np1.h5" "$out/np4-unplaced.h5" -o "$out/unplaced" > /dev/null ||
  fail "the report exited with status $? (unplaced)"
grep -q '^4,.(4,1,1).,8,' "$out/unplaced/scaling.csv" ||
  fail "scaling.csv does not count the unplaced file's cores by its attributes (8): $(grep '^4,' "$out/unplaced/scaling.csv")"
grep -q 'np4-unplaced.h5 records no placement' "$out/unplaced/report.md" || fail "report.md does not say the file has no placement"
"$python" "$check" scaling "$out/np1.h5" "$out/np4-unplaced.h5" "$out/unplaced" || fail "check-report.py disagrees (unplaced)"
echo "scaling_shared_machine.sh: ok"
