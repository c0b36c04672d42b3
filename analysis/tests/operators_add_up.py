#!/usr/bin/env python3
"""operators_add_up.py REPORT_DIR: the profile report's operator table adds up, total_ms =
kernel_ms + comm_ms + intra_op_ms + other_ms in every row (to the printed digits), other_ms is
not below 0 (beyond the printed digits' rounding), total_ms is not below host_ms, and the report
says what host_ms and other_ms are."""
import csv
import os
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
with open(os.path.join(report, "report.md")) as f:
    text = f.read()
for want in ("host_ms is inclusive", "other_ms is the rest"):
    if want not in text:
        bad.append(f"report.md does not say '{want}'")
for b in bad:
    print("operators_add_up:", b)
print(f"operators_add_up: {len(rows)} operators, {len(bad)} problems")
sys.exit(1 if bad or not rows else 0)
