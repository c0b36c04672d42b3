#!/usr/bin/env python3
"""Check that a commscope report's numbers are the HDF5 files' numbers.

Reads the files with h5py (independently of commscope-report's own readers), recomputes what
the report prints and compares it with the report's CSV files (which hold the same numbers as
its Markdown tables):

  check-report.py bench   BENCH.h5 REPORT_DIR     per-collective tables: time and busbw per size
  check-report.py profile PROFILE.h5 REPORT_DIR   components.csv: median/p10/p90/min/max, shares
  check-report.py scaling ONE.h5 N.h5 REPORT_DIR  scaling.csv: t_iter, t_comp, t_comm, speedup

Prints what it compared; exit status 0 when everything matches to the CSV's printed precision,
1 when something does not, 2 on bad arguments or unreadable files.
"""
import csv
import math
import os
import sys

try:
    import h5py
except ImportError:
    sys.exit("check-report.py: needs h5py (Debian: apt-get install python3-h5py)")

REL = 2e-3  # the CSV files print 4 significant digits (shares: 3)
UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}


def fail_usage(message):
    print(f"check-report.py: {message}", file=sys.stderr)
    sys.exit(2)


def read_csv(path):
    if not os.path.isfile(path):
        fail_usage(f"{path}: no such file (not a report folder?)")
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def same(expected, printed, rel):
    if printed in ("-", ""):
        return False
    value = float(printed.rstrip("%"))
    if math.isnan(expected) or math.isnan(value):
        return math.isnan(expected) and math.isnan(value)
    return abs(value - expected) <= rel * abs(expected) + 1e-9


class Checker:
    def __init__(self):
        self.compared = 0
        self.mismatches = []

    def expect(self, where, expected, printed, rel=REL):
        self.compared += 1
        if not same(expected, printed, rel):
            self.mismatches.append(f"{where}: the file gives {expected:.6g}, the report prints {printed!r}")

    def finish(self, what):
        for line in self.mismatches[:20]:
            print("  MISMATCH " + line)
        if self.mismatches:
            print(f"check-report: {what}: {len(self.mismatches)} of {self.compared} values differ")
            return 1
        print(f"check-report: {what}: {self.compared} values match")
        return 0


def open_h5(path):
    try:
        return h5py.File(path, "r")
    except OSError as e:
        fail_usage(f"{path}: cannot open it: {e}")


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def size_bytes(label):
    number, unit = label.split()
    return float(number) * UNITS[unit]


def percentile(values, p):
    values = sorted(values)
    rank = math.ceil(p / 100.0 * len(values))
    return values[min(max(rank, 1), len(values)) - 1]


def check_bench(path, report):
    c = Checker()
    with open_h5(path) as f:
        rows = f["results"][:]
    # What the report shows: out-of-place rows with a size, the first (type, op) of each
    # collective, the median (lower middle) of the repetitions by time.
    first, by_case = {}, {}
    for r in rows:
        coll = text(r["collective"])
        if r["in_place"] or r["bytes"] == 0 or not r["time_us"] > 0:
            continue
        key = (text(r["type"]), text(r["op"]))
        if first.setdefault(coll, key) != key:
            continue
        by_case.setdefault((coll, text(r["algorithm"]), int(r["bytes"])), []).append(
            (float(r["time_us"]), float(r["busbw_GBps"])))
    tables = {}
    for (coll, algo, size), reps in sorted(by_case.items()):
        reps.sort()
        time_us, busbw = reps[(len(reps) - 1) // 2]
        if coll not in tables:
            tables[coll] = {size_key: row for size_key, row in
                            ((size_bytes(row["size"]), row) for row in read_csv(os.path.join(report, coll + ".csv")))}
        match = [row for s, row in tables[coll].items() if abs(s - size) <= 1e-3 * size]
        if len(match) != 1:
            c.mismatches.append(f"{coll}.csv: no line for {size} B")
            continue
        c.expect(f"{coll}.csv {algo} {size} B time_us", time_us, match[0].get(algo + "_us", "-"))
        c.expect(f"{coll}.csv {algo} {size} B busbw", busbw, match[0].get(algo + "_busbw", "-"))
    if not by_case:
        c.mismatches.append(f"{path}: no out-of-place measurements")
    return c.finish(f"bench {os.path.basename(path)} vs {report} ({len(tables)} collectives)")


def breakdown(path):
    with open_h5(path) as f:
        b = f["breakdown"][:]
        nranks = int(f["meta"].attrs["nranks"]) if "nranks" in f["meta"].attrs else 0
    return b, nranks


COMPONENTS = [("kernel", "kernel_ns"), ("intra-op", "intra_ns"), ("inter-op", "inter_ns"),
              ("comm wait", "comm_wait_ns"), ("comm transfer", "comm_transfer_ns"), ("step", "window_ns")]


def check_profile(path, report):
    c = Checker()
    b, _ = breakdown(path)
    rows = {row["component"]: row for row in read_csv(os.path.join(report, "components.csv"))}
    total = float(b["window_ns"].sum())
    for name, field in COMPONENTS:
        values = [float(v) / 1e6 for v in b[field]]
        row = rows.get(name)
        if row is None:
            c.mismatches.append(f"components.csv: no line for {name}")
            continue
        for column, p in (("median_ms", 50), ("p10_ms", 10), ("p90_ms", 90), ("min_ms", 0), ("max_ms", 100)):
            c.expect(f"components.csv {name} {column}", percentile(values, p), row[column])
        if name != "step":
            c.expect(f"components.csv {name} share_of_step", 100.0 * sum(values) * 1e6 / total, row["share_of_step"],
                     rel=1e-2)
    return c.finish(f"profile {os.path.basename(path)} vs {report} ({len(b)} rows)")


def summarize(path):
    """Per iteration (the first dropped when there are more): the slowest rank's step, the mean
    over ranks of communication and kernel time; averaged over iterations, in ms."""
    b, nranks = breakdown(path)
    steps = {}
    for r in b:
        steps.setdefault(int(r["iteration"]), []).append(r)
    keys = sorted(steps)
    if len(keys) > 1:
        keys = keys[1:]
    t_iter = sum(max(float(r["window_ns"]) for r in steps[k]) for k in keys) / len(keys) / 1e6
    t_comm = sum(sum(float(r["comm_ns"]) for r in steps[k]) / len(steps[k]) for k in keys) / len(keys) / 1e6
    t_comp = sum(sum(float(r["kernel_ns"]) for r in steps[k]) / len(steps[k]) for k in keys) / len(keys) / 1e6
    return nranks, t_iter, t_comp, t_comm


def check_scaling(paths, report):
    c = Checker()
    runs = sorted((summarize(p) for p in paths), key=lambda r: r[0])
    rows = {row["ranks"]: row for row in read_csv(os.path.join(report, "scaling.csv"))}
    base = runs[0]
    for ranks, t_iter, t_comp, t_comm in runs:
        row = rows.get(str(ranks))
        if row is None:
            c.mismatches.append(f"scaling.csv: no line for {ranks} ranks")
            continue
        c.expect(f"scaling.csv {ranks} ranks t_iter_ms", t_iter, row["t_iter_ms"])
        c.expect(f"scaling.csv {ranks} ranks t_comp_ms", t_comp, row["t_comp_ms"])
        c.expect(f"scaling.csv {ranks} ranks t_comm_ms", t_comm, row["t_comm_ms"])
        c.expect(f"scaling.csv {ranks} ranks speedup", base[1] / t_iter, row["speedup"])
    return c.finish(f"scaling {' '.join(os.path.basename(p) for p in paths)} vs {report}")


def main(argv):
    if len(argv) >= 2 and argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    if len(argv) == 4 and argv[1] == "bench":
        return check_bench(argv[2], argv[3])
    if len(argv) == 4 and argv[1] == "profile":
        return check_profile(argv[2], argv[3])
    if len(argv) >= 5 and argv[1] == "scaling":
        return check_scaling(argv[2:-1], argv[-1])
    fail_usage("usage: check-report.py bench|profile FILE.h5 REPORT_DIR, or scaling A.h5 B.h5... REPORT_DIR")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
