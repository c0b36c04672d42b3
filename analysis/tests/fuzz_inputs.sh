#!/usr/bin/env bash
# fuzz_inputs.sh READER_EXE FIXTURE_DIR WORK_DIR [N=500]: N damaged variants of the fixture files
# (fixtures.sh) read by READER_EXE (test_analysis_read_any KIND FILE). Fails if any run exits
# other than 0 ("ok") or 2 (one InputError line), is killed by a signal, runs past 20 s, or prints
# more than one line. Variants: random overwrites of 1..64 bytes, truncations, zero-filled tails,
# a kept header with garbage after it, random garbage, an empty file, a directory; a fixed seed (COMMSCOPE_FUZZ_SEED changes it).
set -u
if [ $# -lt 3 ] || [ $# -gt 4 ]; then
  echo "usage: $0 READER_EXE FIXTURE_DIR WORK_DIR [N=500]" >&2
  exit 1
fi
exec python3 - "$1" "$2" "$3" "${4:-500}" <<'PY'
import concurrent.futures
import os
import random
import shutil
import signal
import subprocess
import sys

reader, fixture_dir, work, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
TIMEOUT_S = 20
# The report's own limit on reading one file (its preflight child), well inside TIMEOUT_S: damaged
# metadata can send HDF5 into an endless loop, which must end as a one-line error.
os.environ["COMMSCOPE_READ_TIMEOUT"] = "5"
HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"

fixtures = sorted(f for f in os.listdir(fixture_dir) if f.endswith(".h5") and not f.endswith(".partial"))
fixtures = [f for f in fixtures if f.startswith("bench-") or f.startswith("train-")]
if not fixtures:
    print(f"fuzz_inputs: no fixture files in {fixture_dir} (run fixtures.sh first)")
    sys.exit(1)
originals = {}
for f in fixtures:
    with open(os.path.join(fixture_dir, f), "rb") as fh:
        originals[f] = fh.read()

shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
rng = random.Random(int(os.environ.get("COMMSCOPE_FUZZ_SEED", "2026")))


def kind_of(name):
    return "bench" if name.startswith("bench-") else "profile"


def variant(i):
    """(description, kind, path) of variant i; writes the file."""
    path = os.path.join(work, f"v{i:04d}.h5")
    if i == 0:
        open(path, "wb").close()
        return "empty file", rng.choice(["bench", "profile"]), path
    if i == 1:
        os.makedirs(path)
        return "directory", rng.choice(["bench", "profile"]), path
    name = rng.choice(fixtures)
    data = bytearray(originals[name])
    kind = kind_of(name)
    r = rng.random()
    if r < 0.10:
        kind = "auto"
    elif r < 0.14:
        kind = "profile" if kind == "bench" else "bench"  # the wrong reader
    pick = rng.random()
    if pick < 0.55:
        spots = rng.choice([1, 1, 1, 2, 3, 8])
        what = []
        for _ in range(spots):
            count = rng.randint(1, 64)
            offset = rng.randrange(len(data))
            for j in range(offset, min(offset + count, len(data))):
                data[j] = rng.randrange(256)
            what.append(f"{count}@{offset}")
        desc = f"{name}: overwrote " + ",".join(what)
    elif pick < 0.75:
        length = rng.randrange(len(data))
        del data[length:]
        desc = f"{name}: truncated at {length}"
    elif pick < 0.87:
        start = rng.randrange(len(data))
        data[start:] = bytes(len(data) - start)
        desc = f"{name}: zeros from {start}"
    elif pick < 0.95:
        keep = rng.choice([8, 48, 96, 512, 2048, 4096])
        keep = min(keep, len(data))
        data[keep:] = rng.randbytes(len(data) - keep)
        desc = f"{name}: first {keep} bytes kept, garbage after"
    else:
        size = rng.randrange(1, 65536)
        data = bytearray(rng.randbytes(size))
        if rng.random() < 0.5:
            data[0:8] = HDF5_SIGNATURE
        desc = f"garbage of {size} bytes" + (" behind an HDF5 signature" if data[:8] == HDF5_SIGNATURE else "")
    with open(path, "wb") as fh:
        fh.write(data)
    return desc, kind, path


def run(desc, kind, path):
    proc = subprocess.Popen([reader, kind, path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return "fail", f"timed out after {TIMEOUT_S} s"
    text = out.decode("utf-8", "replace")
    lines = text.splitlines()
    rc = proc.returncode
    if rc < 0:
        return "fail", f"killed by signal {-rc}: {text.strip()[:500]}"
    if rc == 0:
        if lines != ["ok"]:
            return "fail", f"exit 0 but printed {text[:500]!r}"
        return "ok", ""
    if rc == 2:
        if len(lines) != 1 or not lines[0].strip():
            return "fail", f"exit 2 with {len(lines)} lines: {text[:500]!r}"
        if "HDF5 library failed" in lines[0] or "did not finish reading" in lines[0]:
            return "crash_caught", lines[0]
        return "rejected", lines[0]
    return "fail", f"exit {rc}: {text.strip()[:500]}"


jobs = [variant(i) for i in range(n)]
counts = {"ok": 0, "rejected": 0, "crash_caught": 0, "fail": 0}
failures = []
with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, min(2, os.cpu_count() or 1))) as pool:
    for (desc, kind, path), (outcome, detail) in zip(jobs, pool.map(lambda j: run(*j), jobs)):
        counts[outcome] += 1
        if outcome == "fail":
            failures.append(f"  {os.path.basename(path)} ({kind}; {desc}): {detail}")
        elif os.path.isdir(path):
            os.rmdir(path)
        else:
            os.remove(path)  # keep only the failing variants

for line in failures:
    print(line)
print(f"fuzz_inputs: {n} variants of {len(fixtures)} fixtures: {counts['ok']} ok, "
      f"{counts['rejected'] + counts['crash_caught']} rejected ({counts['crash_caught']} of them after "
      f"HDF5 itself crashed or hung in preflight's child), {counts['fail']} failed")
sys.exit(1 if failures else 0)
PY
