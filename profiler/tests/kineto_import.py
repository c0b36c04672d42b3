#!/usr/bin/env python3
"""kineto_import.py IMPORT_EXE DUMP_EXE REPORT_EXE TRACE_EXE DATA_DIR WORK_DIR

commscope-import kineto on the shared PyTorch profiler traces (DATA_DIR: vit128_rank-{0,1},
resnet2_rank-0, alexnet1_rank-0), checked against a reference computed here, independently, from
the JSON (Python's json module, times as exact decimals): with --window trace every rank's one
row must be, to the nanosecond,
  window = last device activity end - first start,  comm = |NCCL kernels|,
  kernel = |all device activities| - comm,  intra + inter = window - |all|,
  overlap = |kernels, memcpy, memset and NCCL kernels|,
  and the stored HTA terms |compute kernels and NCCL kernels|, |memcpy/memset alone|;
with and without --hta-rounding (whole us as HTA rounds them: in doubles, start up, end down).
vit128 (two ranks of one job): both ranks, two ProfilerStep rows each, the early rank's wait equal to the reference's (NCCL
kernels paired across ranks by overlapping intervals on the shared clock), wait + transfer =
comm. Every row's identity holds; commscope-report profile and commscope-trace read the files.
Exit 77 (skipped) when DATA_DIR is missing.
"""
import gzip
import json
import math
import os
import subprocess
import sys
from decimal import Decimal

imp, dump, report, trace, data, work = sys.argv[1:7]
if not os.path.isdir(data):
    print(f"kineto_import: SKIP: no trace folder {data} (PyTorch profiler traces: "
          "the shared data folder beside the checkout, ../shared/data/kineto, not in the repository; docs/profiler.md, 'The traces the tests read', says which traces and how torch.profiler writes such files)")
    sys.exit(77)
os.makedirs(work, exist_ok=True)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def load(path):
    with gzip.open(path, "rt") as f:
        return json.load(f, parse_float=Decimal, parse_int=Decimal)


def device_intervals(doc, rounding):
    """[(start_ns, end_ns, cls)] with cls 'compute', 'comm', 'memory'; absolute ns."""
    base = int(doc.get("baseTimeNanoseconds", 0))
    out = []
    for e in doc["traceEvents"]:
        cat = e.get("cat")
        if e.get("ph") != "X" or cat not in ("kernel", "gpu_memcpy", "gpu_memset"):
            continue
        ts, dur = Decimal(e["ts"]), Decimal(e["dur"])
        if rounding:  # HTA's: in doubles, start up, ts + dur down
            s = math.ceil(float(ts)) * 1000
            t = max(s, math.floor(float(ts) + float(dur)) * 1000)
        else:
            s, t = int(ts * 1000), int((ts + dur) * 1000)
        cls = "memory" if cat != "kernel" else ("comm" if "nccl" in e["name"].lower() else "compute")
        out.append((s + base, t + base, cls))
    return out


def union(ivs):
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted(ivs):
        if e <= s:
            continue
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def reference(ivs):
    span = max(e for _, e, _ in ivs) - min(s for s, _, _ in ivs)
    pick = lambda *cls: [(s, e) for s, e, c in ivs if c in cls]
    all_, comm = union(pick("compute", "comm", "memory")), union(pick("comm"))
    k = union(pick("compute", "memory"))
    p, pc = union(pick("compute")), union(pick("compute", "comm"))
    return {"window_ns": span, "comm_ns": comm, "kernel_ns": all_ - comm, "idle_ns": span - all_,
            "overlap_ns": k + comm - all_, "hta_compute_comm_ns": p + comm - pc, "hta_memory_only_ns": all_ - pc}


def run(cmd, expect=0):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    check(r.returncode == expect, f"{' '.join(cmd)}: exit {r.returncode} (expected {expect}): {r.stderr.strip()[:300]}")
    return r


def dump_profile(path):
    r = run([dump, path])
    return json.loads(r.stdout) if r.returncode == 0 else None


def common_checks(p, name):
    for row in p["breakdown"]:
        check(row["identity_ok"] == 1, f"{name}: rank {row['rank']} iteration {row['iteration']}: identity")
        check(row["comm_wait_ns"] + row["comm_transfer_ns"] == row["comm_ns"], f"{name}: wait + transfer != comm")
        check(row["kernel_ns"] + row["intra_ns"] + row["inter_ns"] + row["comm_ns"] == row["window_ns"],
              f"{name}: the four parts do not sum to the window")


sets = {"vit128": ["vit128_rank-0.json.gz", "vit128_rank-1.json.gz"], "resnet2": ["resnet2_rank-0.json.gz"],
        "alexnet1": ["alexnet1_rank-0.json.gz"]}
docs = {f: load(os.path.join(data, f)) for files in sets.values() for f in files}

for name, files in sets.items():
    paths = [os.path.join(data, f) for f in files]
    for rounding in (False, True):
        out = os.path.join(work, f"{name}-trace{'-rounded' if rounding else ''}.h5")
        run([imp, "kineto", *paths, "-o", out, "--window", "trace"] + (["--hta-rounding"] if rounding else []))
        p = dump_profile(out)
        if p is None:
            continue
        check(p["nranks"] == len(files), f"{name}: {p['nranks']} ranks, expected {len(files)}")
        common_checks(p, name)
        # The process group's members as the communicator label where the trace names them
        # (resnet2's "Process Group Ranks": "[0, 1]"), none where it does not (vit128, alexnet1).
        labels = {e[6] for rank in p["events"] for e in rank["communication"]}
        want = {"pg[0,1]"} if name == "resnet2" else {""} if labels else set()  # alexnet1 has no collective
        check(labels == want, f"{name}: communicator labels {sorted(labels)}, expected {sorted(want)}")
        for r, f in enumerate(files):
            ref = reference(device_intervals(docs[f], rounding))
            rows = [b for b in p["breakdown"] if b["rank"] == r]
            check(len(rows) == 1, f"{name} rank {r}: {len(rows)} rows with --window trace")
            if not rows:
                continue
            row, attr = rows[0], p["attributes"]
            got = {"window_ns": row["window_ns"], "comm_ns": row["comm_ns"], "kernel_ns": row["kernel_ns"],
                   "idle_ns": row["intra_ns"] + row["inter_ns"], "overlap_ns": row["overlap_ns"],
                   "hta_compute_comm_ns": int(attr[f"kineto.rank{r}.hta_compute_comm_ns"]),
                   "hta_memory_only_ns": int(attr[f"kineto.rank{r}.hta_memory_only_ns"])}
            for k, v in ref.items():
                check(got[k] == v, f"{name} rank {r} rounding={rounding}: {k} {got[k]} != reference {v}")
            print(f"{name} rank {r} rounding={rounding}: " + ", ".join(f"{k} {got[k]}" for k in ref))
        run([report, "profile", out])
        run([trace, out, "-o", out + ".json"])

# vit128 by ProfilerStep: both ranks, two steps each, the wait of the early rank.
out = os.path.join(work, "vit128.h5")
r = run([imp, "kineto", *[os.path.join(data, f) for f in sets["vit128"]], "-o", out])
p = dump_profile(out)
if p is not None:
    common_checks(p, "vit128 steps")
    check(sorted((b["rank"], b["iteration"]) for b in p["breakdown"]) == [(0, 551), (0, 552), (1, 551), (1, 552)],
          "vit128: rows are not ranks 0, 1 x steps 551, 552")
    check(all(x["clock_offset_ns"] == 0 for x in p["ranks"]), "vit128: the traces share a clock: offsets 0")
    # Reference wait: NCCL kernels of the two ranks paired by overlapping intervals (each call
    # launched one kernel here); the rank that started first waited until the other started.
    nccl = []
    for f in sets["vit128"]:
        ks = sorted((s, e) for s, e, c in device_intervals(docs[f], False) if c == "comm")
        nccl.append(ks)
    wait = [0, 0]
    a = b = 0
    while a < len(nccl[0]) and b < len(nccl[1]):
        (s0, e0), (s1, e1) = nccl[0][a], nccl[1][b]
        if s0 < e1 and s1 < e0:
            late = max(s0, s1)
            wait[0] += min(late, e0) - s0
            wait[1] += min(late, e1) - s1
            a, b = a + 1, b + 1
        elif e0 <= e1:
            a += 1
        else:
            b += 1
    for rank in (0, 1):
        got = sum(x["comm_wait_ns"] for x in p["breakdown"] if x["rank"] == rank)
        check(got == wait[rank], f"vit128 rank {rank}: wait {got} ns != reference {wait[rank]} ns")
        print(f"vit128 steps rank {rank}: wait {got} ns (reference {wait[rank]})")
    check(wait[0] > 0, "vit128: the reference has no wait at all")
    rep = run([report, "profile", out])
    check("vit128_rank-1.json.gz" in rep.stdout and "mean_comm_transfer_ms" in rep.stdout,
          "commscope-report profile does not show both ranks with their transfer")
    run([trace, out, "-o", out + ".json"])

# Errors: one line, exit 2.
bad = os.path.join(work, "bad.json")
with open(bad, "w") as f:
    f.write('{"traceEvents": [{"ph": "X", "ts": 1, "dur": 2,}]}')
r = run([imp, "kineto", bad, "-o", os.path.join(work, "bad.h5")], expect=2)
check(r.stderr.count("\n") == 1 and "(byte " in r.stderr, f"malformed JSON: {r.stderr!r}")
r = run([imp, "kineto", os.path.join(data, sets["vit128"][0]), os.path.join(data, sets["vit128"][0]), "-o",
         os.path.join(work, "dup.h5")], expect=2)
check(r.stderr.count("\n") == 1 and "again" in r.stderr, f"a rank twice: {r.stderr!r}")

if failures:
    print(f"kineto_import: {len(failures)} failure(s)")
    sys.exit(1)
print("kineto_import: all checks passed")
