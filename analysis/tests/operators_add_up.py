#!/usr/bin/env python3
"""operators_add_up.py REPORT_DIR: the profile report's operator table adds up, host_ms =
kernel_ms + comm_ms + intra_op_ms + other_ms in every row (to the printed digits), and the
report says host_ms is inclusive."""
import csv
import os
import sys

report = sys.argv[1]
with open(os.path.join(report, "operators.csv"), newline="") as f:
    rows = list(csv.DictReader(f))
bad = []
for r in rows:
    parts = sum(float(r[c]) for c in ("kernel_ms", "comm_ms", "intra_op_ms", "other_ms"))
    host = float(r["host_ms"])
    if abs(parts - host) > 2e-3 * max(abs(host), 1e-3) + 1e-3:
        bad.append(f"{r['operator']}: host_ms {host} but the parts sum to {parts:.4g}")
with open(os.path.join(report, "report.md")) as f:
    if "host_ms is inclusive" not in f.read():
        bad.append("report.md does not say whether host_ms is inclusive")
for b in bad:
    print("operators_add_up:", b)
print(f"operators_add_up: {len(rows)} operators, {len(bad)} problems")
sys.exit(1 if bad or not rows else 0)
