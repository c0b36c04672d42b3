#!/usr/bin/env python3
"""predict_unchanged.py BEFORE_DIR REPORT_DIR: predict without --tp/--pp/--micro-batches prints
what it printed before they existed. BEFORE_DIR holds the prediction.csv and communication.csv
the earlier commscope-report wrote for the same command line (tests/data/predict-before); every
column of each earlier table must be in the new one, by name, with the same cells (the new ones
add the tp/pp columns and the notes). Exit 0, or 1 with
the differences."""
import csv
import re
import sys

# Columns that became sizes in bytes (numbers in the CSV, named NAME_bytes): the earlier text
# ("20.7 MiB", 3 significant digits) must be the new number rounded.
RENAMED = {"bytes_per_call": "per_call_bytes", "memory_per_gpu": "memory_per_gpu_bytes"}
UNITS = {"B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3, "TiB": 1024**4}


def same(old, new, renamed):
    if not renamed:
        return old == new
    m = re.fullmatch(r"([0-9.]+) (B|KiB|MiB|GiB|TiB)", old)
    return m is not None and abs(float(m.group(1)) * UNITS[m.group(2)] - float(new)) <= 3e-3 * float(new)


def read(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def main():
    if len(sys.argv) != 3:
        print("usage: predict_unchanged.py BEFORE_DIR REPORT_DIR", file=sys.stderr)
        return 2
    before, report = sys.argv[1], sys.argv[2]
    bad = []
    for table in ("communication.csv", "prediction.csv"):
        old_head, old_rows = read(f"{before}/{table}")
        new_head, new_rows = read(f"{report}/{table}")
        if len(old_rows) != len(new_rows):
            bad.append(f"{table}: {len(old_rows)} rows before, {len(new_rows)} now")
        for c, name in enumerate(old_head):
            renamed = name in RENAMED and RENAMED[name] in new_head
            if name not in new_head and not renamed:
                bad.append(f"{table}: column {name} is gone")
                continue
            n = new_head.index(RENAMED[name] if renamed else name)
            for old, new in zip(old_rows, new_rows):
                if not same(old[c], new[n], renamed):
                    bad.append(f"{table}: ranks {old[0]}, {name}: {old[c]} before, {new[n]} now")
    for line in bad:
        print("FAIL: " + line)
    print(f"predict_unchanged: {len(old_head)} columns and {len(old_rows)} rows compared, {len(bad)} differences")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
