#!/bin/bash
# Damaged llm.c files given to commscope-train: model files (--load-llmc), training checkpoints
# (--load) and token shards (--data). Every run must end with status 0, or status 2 and one line
# on stderr naming the file; never a crash, a hang or a multi-line error. Variants: header ints
# set to meaningful or random values, random bytes anywhere, truncations, appended bytes; a fixed
# seed (COMMSCOPE_FUZZ_SEED changes it).
# usage: fuzz_files.sh TRAIN TEXT WORKDIR [VARIANTS]
set -u
train=$1 text=$2 work=$3 n=${4:-150}
rm -rf "$work" && mkdir -p "$work" || exit 1
common=(--model tiny --batch 2 --threads 1 --log-every 1000)
"$train" "${common[@]}" --data "$text" --steps 2 --save-llmc "$work/good.bin" --save "$work/good.ckpt" >/dev/null ||
  { echo "fuzz_files: could not write the good files"; exit 1; }
python3 - "$train" "$text" "$work" "$n" "${common[@]}" <<'PY'
import concurrent.futures, os, random, struct, subprocess, sys

train, text, work, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
common = sys.argv[5:]
rng = random.Random(int(os.environ.get("COMMSCOPE_FUZZ_SEED", "2026")))
TIMEOUT_S = 60

tokens = open(text, "rb").read()[:4000]
shard = struct.pack("<256i", 20240520, 1, len(tokens), *([0] * 253)) + struct.pack(f"<{len(tokens)}H", *tokens)
goods = {
    "model": open(os.path.join(work, "good.bin"), "rb").read(),
    "checkpoint": open(os.path.join(work, "good.ckpt"), "rb").read(),
    "shard": shard,
}
SPECIALS = [0, -1, 1, 2, 3, 4, 5, 7, 8, 16, 64, 100, 127, 128, 255, 256, 1000, 65536, 1 << 30, 2**31 - 1, -2**31,
            20240326, 20240520]


def damage(data):
    data = bytearray(data)
    pick = rng.random()
    if pick < 0.35:  # header ints (llm.c headers are 256 int32)
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(12)
            v = rng.choice(SPECIALS) if rng.random() < 0.7 else rng.randrange(-2**31, 2**31)
            struct.pack_into("<i", data, 4 * i, v)
        return data, "header ints"
    if pick < 0.6:
        cut = rng.randrange(0, 1100) if rng.random() < 0.5 else rng.randrange(0, len(data))
        return data[:cut], f"truncated to {cut} bytes"
    if pick < 0.9:
        k = rng.randint(1, 32)
        for _ in range(k):
            at = rng.randrange(48) if rng.random() < 0.5 else rng.randrange(len(data))
            data[at] = rng.randrange(256)
        return data, f"{k} random bytes"
    extra = rng.randint(1, 9)
    return data + bytes(rng.randrange(256) for _ in range(extra)), f"{extra} bytes appended"


# The variants first, in order (the seed gives the same files), then run two at a time: each run
# is a process of its own (a singleton MPI start), and most of one is that start.
variants = []
for i in range(n):
    kind = ("model", "checkpoint", "shard")[i % 3]
    data, how = damage(goods[kind])
    path = os.path.join(work, f"v{i:04d}.{kind}")
    with open(path, "wb") as fh:
        fh.write(data)
    if kind == "model":
        args = ["--load-llmc", path, "--data", text]
    elif kind == "checkpoint":
        args = ["--load", path, "--data", text]
    else:
        args = ["--data", path, "--seq", "16"]
    variants.append((path, how, [train, *common, "--steps", "1", *args]))


def run(variant):
    path, how, cmd = variant
    try:
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return "fail", f"{path} ({how}): timed out after {TIMEOUT_S} s"
    err = proc.stderr.decode("utf-8", "replace")
    lines = err.splitlines()
    if proc.returncode == 0:
        os.remove(path)
        return "ok", None
    if proc.returncode == 2 and len(lines) == 1 and path in lines[0]:
        os.remove(path)
        return "rejected", None
    return "fail", f"{path} ({how}): exit {proc.returncode} with {len(lines)} lines: {err[:400]!r}"


counts = {"ok": 0, "rejected": 0, "fail": 0}
failures = []
with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
    for outcome, failure in pool.map(run, variants):
        counts[outcome] += 1
        if failure:
            failures.append(failure)

for line in failures:
    print("  " + line)
print(f"fuzz_files: {n} damaged llm.c files (model, checkpoint, shard): {counts['ok']} ok, "
      f"{counts['rejected']} rejected with one line, {counts['fail']} failed")
sys.exit(1 if failures else 0)
PY
