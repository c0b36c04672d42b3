#!/usr/bin/env python3
"""operators_add_up.py REPORT_DIR: the profile report's operator table adds up, total_ms =
kernel_ms + comm_ms + intra_op_ms + other_ms in every row (to the printed digits), other_ms is
not below 0 (beyond the printed digits' rounding), total_ms is not below host_ms, and the report
says what host_ms and other_ms are. Where operators differ only in a layer's number, the table of
operators by kind (operator_kinds.csv) holds each: its kind's total per step, times the steps and
ranks, is at least the operators' of that kind in the table above."""
import collections
import csv
import os
import re
import sys

report = sys.argv[1]
with open(os.path.join(report, "operators.csv"), newline="") as f:
    rows = list(csv.DictReader(f))


def rounding(x):
    """The rounding of a value printed to 4 significant digits."""
    return 2e-3 * max(abs(x), 1e-3) + 1e-3


bad = []
if rows and "total_ms" not in rows[0]:
    bad.append("operators.csv has no total_ms column (host_ms taken as the total)")
for r in rows:
    parts = sum(float(r[c]) for c in ("kernel_ms", "comm_ms", "intra_op_ms", "other_ms"))
    total, host, other = float(r.get("total_ms", r["host_ms"])), float(r["host_ms"]), float(r["other_ms"])
    if abs(parts - total) > rounding(total):
        bad.append(f"{r['operator']}: total_ms {total} but the parts sum to {parts:.4g}")
    if other < -rounding(total):
        bad.append(f"{r['operator']}: other_ms {other} below 0")
    if total < host - rounding(host):
        bad.append(f"{r['operator']}: total_ms {total} below host_ms {host}")
def kind(name):
    """A name's dot-separated parts that end in a number get '*' for it (block3.attn -> block*.attn)."""
    return ".".join(re.sub(r"[0-9]+$", "*", part) for part in name.split("."))


kinds_path = os.path.join(report, "operator_kinds.csv")
folds = any(kind(r["operator"]) != r["operator"] for r in rows)
if folds and not os.path.exists(kinds_path):
    bad.append("operators differ only in a layer's number, but there is no operator_kinds.csv")
if os.path.exists(kinds_path):
    with open(kinds_path, newline="") as f:
        kinds = {r["operator"]: r for r in csv.DictReader(f)}
    with open(os.path.join(report, "iterations.csv"), newline="") as f:
        steps = list(csv.DictReader(f))
    per = len(steps) * max(int(float(r["ranks"])) for r in steps) if steps else 1
    shown = collections.defaultdict(float)
    for r in rows:
        shown[kind(r["operator"])] += float(r.get("total_ms", r["host_ms"]))
    for k, total in shown.items():
        if k not in kinds:
            bad.append(f"operator_kinds.csv has no {k}")
        elif float(kinds[k]["total_ms"]) * per < total - rounding(total):
            bad.append(f"{k}: {kinds[k]['total_ms']} ms per step x {per} is below the operators' {total:.4g} ms")
with open(os.path.join(report, "report.md")) as f:
    text = f.read()
for want in ("host_ms is inclusive", "other_ms is the rest"):
    if want not in text:
        bad.append(f"report.md does not say '{want}'")
for b in bad:
    print("operators_add_up:", b)
print(f"operators_add_up: {len(rows)} operators{', by kind too' if os.path.exists(kinds_path) else ''}, "
      f"{len(bad)} problems")
sys.exit(1 if bad or not rows else 0)
