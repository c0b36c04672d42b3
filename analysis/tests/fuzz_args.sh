#!/usr/bin/env bash
# fuzz_args.sh REPORT_EXE FIXTURE_DIR WORK_DIR [N=300]: N random command lines for
# commscope-report (subcommands, flags and values drawn at random, real fixtures among missing,
# foreign and garbage files). Every run must end with exit status 0 or 2 within 20 s, and a
# status 2 with exactly one line on stderr; never a signal, a hang or another status.
set -euo pipefail
report=$1 fixtures=$2 work=$3 n=${4:-300}
rm -rf "$work"
mkdir -p "$work"
printf 'not hdf5\n' >"$work/text.h5"
: >"$work/empty.h5"
python3 - "$report" "$fixtures" "$work" "$n" <<'PY'
import os, random, subprocess, sys
report, fx, work, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
random.seed(2026)
files = [f"{fx}/bench-np1.h5", f"{fx}/bench-np2.h5", f"{fx}/bench-np4.h5", f"{fx}/train-np1.h5",
         f"{fx}/train-np2.h5", f"{fx}/train-np4.h5", f"{work}/text.h5", f"{work}/empty.h5", "/no/such.h5", work, ""]
subs = ["bench", "compare", "profile", "scaling", "predict", "trace", "nope", "--help", ""]
flags = ["-o", "--out", "--model", "--layers", "--dim", "--heads", "--seq", "--batch", "--vocab", "--gpus",
         "--bench", "--flops", "--zero", "--bytes-per-param", "--tp", "--pp", "--micro-batches", "--bogus", "-x", "--", "--help"]
values = ["125m", "1.3b", "tiny", "small", "9b", "0", "1", "-1", "2", "3", "4", "7", "1e12", "nan", "inf",
          "1e400", "8,64", "8,x", ",", "2,4,8,64,512", "65536", "1048576", "", "\x01", "é", "x" * 300]
bad = ok = rejected = 0
for i in range(n):
    args = []
    if random.random() < 0.9:
        args.append(random.choice(subs))
    for _ in range(random.randint(0, 8)):
        r = random.random()
        if r < 0.35:
            args.append(random.choice(files))
        elif r < 0.7:
            args.append(random.choice(flags))
        else:
            args.append(random.choice(values))
    for k, a in enumerate(args):  # outputs go under the work folder
        if k > 0 and args[k - 1] in ("-o", "--out"):
            args[k] = os.path.join(work, f"out{i}" + (".json" if "trace" in args else ""))
    try:
        p = subprocess.run([report] + args, capture_output=True, timeout=20, cwd=work)
    except subprocess.TimeoutExpired:
        print(f"FAIL (hang): {args!r}")
        bad += 1
        continue
    err = p.stderr.decode(errors="replace").strip("\n")
    if p.returncode == 0:
        ok += 1
    elif p.returncode == 2 and err.count("\n") == 0 and err.startswith("commscope-report:"):
        rejected += 1
    else:
        bad += 1
        print(f"FAIL (status {p.returncode}): {args!r}\n  {err[:500]}")
print(f"fuzz_args: {n} command lines: {ok} ran, {rejected} rejected with one line and status 2, {bad} failures")
sys.exit(1 if bad else 0)
PY
