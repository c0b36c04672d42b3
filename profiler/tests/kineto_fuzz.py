#!/usr/bin/env python3
"""kineto_fuzz.py IMPORT_EXE WORK_DIR [N=300]

Damaged PyTorch profiler traces read by commscope-import kineto: a small synthetic two-rank trace
(ProfilerStep, nested CPU ops, runtime calls with ac2g flows, kernels, memcpy, NCCL kernels under
record_param_comms, metadata), then N variants of rank 0's file, plain or gzip: truncations, random
byte overwrites, deleted and duplicated spans, garbage, an empty file, a truncated gzip stream.
Every run must exit 0, or 2 with exactly one line "commscope-import: ..." on stderr, within 20 s:
never a crash, a hang or a Python-style traceback. Fixed seed (COMMSCOPE_FUZZ_SEED changes it).
"""
import concurrent.futures
import gzip
import json
import os
import random
import shutil
import subprocess
import sys

imp, work = sys.argv[1], sys.argv[2]
n = int(sys.argv[3]) if len(sys.argv) > 3 else 300
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
rng = random.Random(int(os.environ.get("COMMSCOPE_FUZZ_SEED", "2026")))


def trace(rank):
    ev = [{"ph": "M", "name": "process_name", "pid": 7, "tid": 0, "args": {"name": "python"}},
          {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 7, "tid": 7, "ts": 1000.5,
           "dur": 900.25, "args": {"External id": 1}}]
    t, corr = 1010.0, 100
    for i in range(6):
        ev.append({"ph": "X", "cat": "cpu_op", "name": f"aten::op{i}", "pid": 7, "tid": 7, "ts": t, "dur": 60.0,
                   "args": {"External id": 10 + i, "Input Dims": [[4, 8]], "Input type": ["float"]}})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 7, "ts": t + 5,
                   "dur": 10.0, "args": {"External id": 10 + i, "correlation": corr}})
        ev.append({"ph": "s", "id": corr, "pid": 7, "tid": 7, "ts": t + 5, "cat": "ac2g", "name": "ac2g"})
        cat, name = ("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)") if i == 2 else ("kernel", f"void k{i}<float>()")
        ev.append({"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": 7, "ts": t + 20 + rank, "dur": 30.125,
                   "args": {"External id": 10 + i, "device": 0, "stream": 7, "correlation": corr, "bytes": 64}})
        ev.append({"ph": "f", "id": corr, "pid": 0, "tid": 7, "ts": t + 20, "cat": "ac2g", "name": "ac2g", "bp": "e"})
        t, corr = t + 100, corr + 1
    ev.append({"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 7, "tid": 7, "ts": t, "dur": 40.0,
               "args": {"External id": 50, "Collective name": "allreduce", "In msg nelems": 1024, "Out msg nelems": 1024,
                        "dtype": "Float", "Process Group Name": "0", "Seq": 0}})
    ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 7, "ts": t + 5,
               "dur": 10.0, "args": {"External id": 50, "correlation": corr}})
    ev.append({"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)", "pid": 0,
               "tid": 20, "ts": t + 20 + 7 * rank, "dur": 80.0,
               "args": {"device": 0, "stream": 20, "correlation": corr, "External id": 50}})
    ev.append({"ph": "X", "cat": "mystery", "name": "x\u00e9\\\"", "pid": "Spans", "tid": "y", "ts": 1, "dur": 1})
    return {"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": 2},
            "traceEvents": ev, "baseTimeNanoseconds": 1700000000000000000}


originals = [json.dumps(trace(r), indent=1).encode() for r in (0, 1)]
rank1 = os.path.join(work, "rank1.json")
with open(rank1, "wb") as f:
    f.write(originals[1])


def variant(i):
    data = bytearray(originals[0])
    if i == 0:
        return b"", "empty"
    if i == 1:
        return gzip.compress(bytes(data))[:-20], "truncated gzip"
    pick = rng.random()
    if pick < 0.3:
        cut = rng.randrange(len(data))
        data, what = data[:cut], f"truncated at {cut}"
    elif pick < 0.65:
        spots = []
        for _ in range(rng.choice([1, 1, 2, 4])):
            at = rng.randrange(len(data))
            for j in range(at, min(at + rng.randint(1, 8), len(data))):
                data[j] = rng.choice([rng.randrange(256), ord(rng.choice('{}[]",:0123456789.e-tfn \\'))])
            spots.append(at)
        what = f"overwrote at {spots}"
    elif pick < 0.8:
        a = rng.randrange(len(data))
        b = min(len(data), a + rng.randint(1, 200))
        if rng.random() < 0.5:
            del data[a:b]
            what = f"deleted {a}:{b}"
        else:
            data[a:a] = data[a:b]
            what = f"duplicated {a}:{b}"
    elif pick < 0.9:
        data = bytearray(rng.randbytes(rng.randint(1, 4000)))
        what = "garbage"
    else:
        data = data[: rng.randrange(len(data))] + bytearray(rng.randbytes(rng.randint(1, 100)))
        what = "garbage tail"
    if rng.random() < 0.3:
        return gzip.compress(bytes(data)), what + " (gzip)"
    return bytes(data), what


def run(i):
    data, what = variants[i]
    path = os.path.join(work, f"v{i:04d}.json")
    with open(path, "wb") as f:
        f.write(data)
    args = [imp, "kineto", path, "-o", path + ".h5"]
    if i % 2 == 0:
        args.insert(3, rank1)
    try:
        r = subprocess.run(args, capture_output=True, text=True, timeout=20, errors="replace")
    except subprocess.TimeoutExpired:
        return f"variant {i} ({what}): no exit within 20 s"
    if r.returncode == 0:
        return None
    if r.returncode != 2:
        return f"variant {i} ({what}): exit {r.returncode}: {r.stderr.strip()[:300]}"
    lines = r.stderr.splitlines()
    if len(lines) != 1 or not lines[0].startswith("commscope-import: "):
        return f"variant {i} ({what}): stderr is not one line: {r.stderr[:300]!r}"
    return None


variants = [variant(i) for i in range(n)]  # in order: the seed fixes them
with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
    problems = [p for p in pool.map(run, range(n)) if p]
# The undamaged pair imports.
ok_path = os.path.join(work, "rank0.json")
with open(ok_path, "wb") as f:
    f.write(originals[0])
r = subprocess.run([imp, "kineto", ok_path, rank1, "-o", os.path.join(work, "ok.h5")], capture_output=True, text=True)
if r.returncode != 0 or "not understood: ph X, cat mystery 1" not in r.stdout:
    problems.append(f"the undamaged trace: exit {r.returncode}: {r.stdout[-500:]} {r.stderr[:300]}")
for p in problems:
    print("FAIL:", p)
print(f"kineto_fuzz: {n} variants, {len(problems)} problem(s)")
sys.exit(1 if problems else 0)
