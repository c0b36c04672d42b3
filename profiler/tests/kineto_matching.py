#!/usr/bin/env python3
"""kineto_matching.py IMPORT_EXE DUMP_EXE WORK_DIR

commscope-import kineto on small synthetic traces whose clocks are not shared (no
baseTimeNanoseconds, times from 0): how collective instances are counted as matched and how a
rank's clock is aligned.
  - two ranks with one allreduce each on process group 0: both matched (1 of 1), rank 1's offset
    measured (error 0, not unknown);
  - two ranks on different process groups: nothing shared, so 0 matched on both, and rank 1's
    clock error is unknown (-1) with one warning line on stderr naming rank 1 (exit 0);
  - one rank alone: its instance has no partner, 0 matched.
"""
import json
import os
import shutil
import subprocess
import sys

imp, dump, work = sys.argv[1:4]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def trace(rank, pg, shift):
    """A ProfilerStep with one kernel and one NCCL allreduce on process group pg, times + shift us."""
    t = 10.0 + shift
    ev = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 7, "tid": 7, "ts": t, "dur": 400.0,
           "args": {}},
          {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": 7, "ts": t + 10, "dur": 50.0,
           "args": {"External id": 1}},
          {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 7, "ts": t + 15,
           "dur": 10.0, "args": {"External id": 1, "correlation": 100}},
          {"ph": "X", "cat": "kernel", "name": "void gemm<float>()", "pid": 0, "tid": 7, "ts": t + 30, "dur": 40.0,
           "args": {"device": 0, "stream": 7, "correlation": 100, "External id": 1}},
          {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 7, "tid": 7, "ts": t + 100, "dur": 40.0,
           "args": {"External id": 2, "Collective name": "allreduce", "In msg nelems": 1024,
                    "Out msg nelems": 1024, "dtype": "Float", "Process Group Name": pg, "Seq": 0}},
          {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 7, "ts": t + 105,
           "dur": 10.0, "args": {"External id": 2, "correlation": 101}},
          {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)", "pid": 0,
           "tid": 20, "ts": t + 120, "dur": 80.0,
           "args": {"device": 0, "stream": 20, "correlation": 101, "External id": 2}}]
    return {"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": 2},
            "traceEvents": ev}


def write(name, doc):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def run_import(name, files):
    out = os.path.join(work, name + ".h5")
    r = subprocess.run([imp, "kineto", *files, "-o", out], capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, f"{name}: exit {r.returncode}: {r.stderr.strip()}")
    if r.returncode != 0:
        return None, r
    d = subprocess.run([dump, out], capture_output=True, text=True, timeout=60)
    return json.loads(d.stdout), r


def matched(p, rank):
    return int(p["attributes"][f"kineto.rank{rank}.collectives_matched"])


# Shared process group: both instances matched, rank 1's clock aligned on the collective's end.
p, r = run_import("shared", [write("s0.json", trace(0, "0", 0)), write("s1.json", trace(1, "0", 250))])
if p:
    for rank in (0, 1):
        check(matched(p, rank) == 1, f"shared: rank {rank} matched {matched(p, rank)}, expected 1")
    check(p["ranks"][1]["clock_error_ns"] == 0, f"shared: rank 1 clock error {p['ranks'][1]['clock_error_ns']}")
    check("warning" not in r.stderr, f"shared: unexpected warning {r.stderr!r}")
    print(f"shared: matched {matched(p, 0)}, {matched(p, 1)}; rank 1 offset {p['ranks'][1]['clock_offset_ns']} ns, "
          f"error {p['ranks'][1]['clock_error_ns']} ns")

# Different process groups: nothing shared with rank 0.
p, r = run_import("apart", [write("a0.json", trace(0, "0", 0)), write("a1.json", trace(1, "1", 250))])
if p:
    for rank in (0, 1):
        check(matched(p, rank) == 0, f"apart: rank {rank} matched {matched(p, rank)}, expected 0 (no partner)")
    err = p["ranks"][1]["clock_error_ns"]
    check(err == -1, f"apart: rank 1 clock error {err} ns, expected -1 (unknown): nothing measured the offset")
    lines = r.stderr.splitlines()
    check(len(lines) == 1 and "warning" in r.stderr and "rank 1" in r.stderr and "unknown" in r.stderr,
          f"apart: stderr {r.stderr!r}, expected one warning about rank 1's clock")
    print(f"apart: matched {matched(p, 0)}, {matched(p, 1)}; rank 1 clock error {err}; stderr {r.stderr.strip()!r}")

# One rank alone: nothing to match with.
p, r = run_import("alone", [write("one.json", trace(0, "0", 0))])
if p:
    check(int(p["attributes"]["kineto.rank0.collectives"]) == 1, "alone: one collective instance")
    check(matched(p, 0) == 0, f"alone: matched {matched(p, 0)}, expected 0 (no other rank)")
    check("matched across ranks: 0" in r.stdout, "alone: the summary does not say 0 matched")
    print(f"alone: matched {matched(p, 0)}")

if failures:
    print(f"kineto_matching: {len(failures)} failure(s)")
    sys.exit(1)
print("kineto_matching: all checks passed")
