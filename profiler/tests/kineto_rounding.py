#!/usr/bin/env python3
"""kineto_rounding.py IMPORT_EXE DUMP_EXE WORK_DIR

commscope-import kineto --hta-rounding rounds as Holistic Trace Analysis does: in doubles on the
trace's own times (start up, ts + dur down). A kernel at ts 1712195495502095.001 us (a Unix time,
held by a double to 0.25 us: read as ...095.0) lasting 10.5 us is [...095, ...105], 10 us, in
HTA; exact decimals would give [...096, ...105], 9 us. Without the flag the kernel is 10.5 us.
"""
import json
import os
import shutil
import subprocess
import sys

imp, dump, work = sys.argv[1:4]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
path = os.path.join(work, "rank0.json")
with open(path, "w") as f:
    f.write('{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "void k<float>()", "pid": 0, "tid": 7, '
            '"ts": 1712195495502095.001, "dur": 10.5, "args": {"device": 0, "stream": 7, "correlation": 1}}]}')
failures = []
for flag, want in ((["--hta-rounding"], 10000), ([], 10500)):
    out = os.path.join(work, "p.h5")
    r = subprocess.run([imp, "kineto", path, "-o", out, "--window", "trace", *flag], capture_output=True, text=True)
    if r.returncode != 0:
        failures.append(f"{flag}: exit {r.returncode}: {r.stderr.strip()}")
        continue
    row = json.loads(subprocess.run([dump, out], capture_output=True, text=True).stdout)["breakdown"][0]
    print(f"{flag or 'exact'}: window {row['window_ns']} ns, kernel {row['kernel_ns']} ns (expected {want})")
    if row["window_ns"] != want or row["kernel_ns"] != want:
        failures.append(f"{flag or 'exact'}: window {row['window_ns']} ns, kernel {row['kernel_ns']} ns, expected {want}")
for f in failures:
    print("FAIL:", f)
if failures:
    sys.exit(1)
print("kineto_rounding: all checks passed")
