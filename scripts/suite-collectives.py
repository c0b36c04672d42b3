#!/usr/bin/env python3
"""The suite summary's collectives: from commscope-report bench's per-collective CSV files
(REPORT_DIR/COLLECTIVE.csv, ALGO_fitted_us the median call of each size), per collective the
fastest algorithm by its median call at the smallest size (latency) and at the largest size
(bus bandwidth), each with the runner-up, both measured at the size named; and how many
algorithms' alpha-beta fits held over every regime (REPORT_DIR/fits.csv), naming the one where
only one did. A fit is never the source of a "best": a latency from one regime and a bandwidth
from another described no algorithm (docs/report.md).

    suite-collectives.py REPORT_DIR
"""
import csv
import math
import os
import sys


def num(text):
    try:
        v = float(text)
    except (TypeError, ValueError):
        return math.nan
    return v


def size_text(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:g} {unit}"
        n /= 1024
    return f"{n:g} GiB"


def fmt(v):
    return f"{v:.4g}"


def algorithms(header):
    return [c[: -len("_fitted_us")] for c in header if c.endswith("_fitted_us")]


def ranked(row, algos, key):
    """(value, algorithm) of the algorithms measured at this size, best first."""
    out = []
    for a in algos:
        v = key(row, a)
        if v == v and v > 0:
            out.append((v, a))
    return out


def median_time(row, a):
    return num(row.get(f"{a}_fitted_us"))


def median_busbw(row, a):
    """busbw at the median call: the row's busbw (at its mean call) scaled by mean / median."""
    mean, median, busbw = num(row.get(f"{a}_us")), num(row.get(f"{a}_fitted_us")), num(row.get(f"{a}_busbw"))
    return busbw * mean / median if median > 0 else math.nan


def collective_line(name, rows):
    algos = algorithms(rows[0].keys())
    first, last = rows[0], rows[-1]
    lat = sorted(ranked(first, algos, median_time))
    bw = sorted(ranked(last, algos, median_busbw), reverse=True)
    parts = []
    if lat:
        text = f"{size_text(num(first['size_bytes']))}: {lat[0][1]} {fmt(lat[0][0])} us"
        if len(lat) > 1:
            text += f" (next {lat[1][1]} {fmt(lat[1][0])})"
        parts.append(text)
    if bw and num(last["size_bytes"]) != num(first["size_bytes"]):
        text = f"{size_text(num(last['size_bytes']))}: {bw[0][1]} {fmt(bw[0][0])} GB/s busbw"
        if len(bw) > 1:
            text += f" (next {bw[1][1]} {fmt(bw[1][0])})"
        parts.append(text)
    return f"  {name:14} " + ("   ".join(parts) if parts else "no measured size")


def fits_line(report):
    """How many (collective, algorithm) fits held in every regime, and which collectives have one only."""
    path = os.path.join(report, "fits.csv")
    if not os.path.exists(path):
        return None
    held = {}
    for r in csv.DictReader(open(path, newline="")):
        key = (r["collective"], r["algorithm"])
        held[key] = held.get(key, True) and r["fit"] != "does not fit"
    if not held:
        return None
    total, ok = len(held), sum(held.values())
    by = {}
    for (c, a), h in held.items():
        by.setdefault(c, []).append((a, h))
    single = [f"{c} ({next(a for a, h in algos if h)}'s)" for c, algos in by.items()
              if len(algos) > 1 and sum(h for _, h in algos) == 1]
    text = f"  alpha-beta fits held at every size for {ok} of {total} collective and algorithm pairs"
    if single:
        text += "; only one algorithm's held for " + ", ".join(single)
    return text


def main(argv):
    if len(argv) != 2:
        sys.exit("usage: suite-collectives.py REPORT_DIR")
    report = argv[1]
    collectives = []
    fits = os.path.join(report, "fits.csv")
    if os.path.exists(fits):
        for r in csv.DictReader(open(fits, newline="")):
            if r["collective"] not in collectives:
                collectives.append(r["collective"])
    for c in sorted(f[:-4] for f in os.listdir(report) if f.endswith(".csv")):
        if c not in collectives and c not in ("fits", "machine"):
            collectives.append(c)
    for c in collectives:
        path = os.path.join(report, c + ".csv")
        if not os.path.exists(path):
            continue
        reader = csv.DictReader(open(path, newline=""))
        if "size_bytes" not in (reader.fieldnames or []):
            continue  # not a collective's rows (the machine's tables)
        rows = sorted(reader, key=lambda r: num(r["size_bytes"]))
        if rows and any(k.endswith("_fitted_us") for k in rows[0]):
            print(collective_line(c, rows))
    line = fits_line(report)
    if line:
        print(line)


if __name__ == "__main__":
    main(sys.argv)
