#!/usr/bin/env python3
"""Check that a commscope report's numbers are the HDF5 files' numbers.

Reads the files with h5py (independently of commscope-report's own readers), recomputes what
the report prints and compares it with the report's CSV files (which hold the same numbers as
its Markdown tables):

  check-report.py bench   BENCH.h5 [MORE.h5 ...] REPORT_DIR
                                                  per-collective tables: time, busbw and fitted time per size
                                                  (several files: runs pooled, as the report does);
                                                  fits.csv: each regime's line refitted from the
                                                  times, the regimes tiling the sizes, the verdict
  check-report.py profile PROFILE.h5 REPORT_DIR   components.csv: median/p10/p90/min/max, shares
  check-report.py scaling ONE.h5 N.h5 REPORT_DIR  scaling.csv: t_iter, t_comp, t_comm, speedup, per
                                                  (ranks, layout); with predicted_vs_measured.csv
                                                  (--bench): each group's measured communication
                                                  (tp.*, pp.* + embedding.*, the rest) from the
                                                  events, the predicted compute (the step's FLOPs
                                                  at the baseline's rate per CPU) and the error

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


def fail_usage(message):
    print(f"check-report.py: {message}", file=sys.stderr)
    sys.exit(2)


def read_csv(path):
    if not os.path.isfile(path):
        fail_usage(f"{path}: no such file (not a report folder?)")
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def same(expected, printed, rel, abs_tol=0.0):
    if printed in ("-", ""):
        return False
    value = float(printed.rstrip("%"))
    if math.isnan(expected) or math.isnan(value):
        return math.isnan(expected) and math.isnan(value)
    if math.isinf(expected) or math.isinf(value):  # inf - inf is nan: compare them exactly
        return value == expected
    return abs(value - expected) <= rel * abs(expected) + abs_tol + 1e-9


class Checker:
    def __init__(self):
        self.compared = 0
        self.mismatches = []

    def expect(self, where, expected, printed, rel=REL, abs_tol=0.0):
        self.compared += 1
        if not same(expected, printed, rel, abs_tol):
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


def percentile(values, p):
    values = sorted(values)
    rank = math.ceil(p / 100.0 * len(values))
    return values[min(max(rank, 1), len(values)) - 1]


def pooled_cases(paths):
    """(collective, algorithm, bytes) -> (time_us, busbw, typical_us) as the report shows them:
    out-of-place rows with a size, the first (type, op) of each collective, the median (lower
    middle) by time of the repetitions of every file pooled; typical_us, what the piecewise fits
    fit, is the lower of that time and the lower middle of every per-call sample of the case."""
    first, by_case, samples = {}, {}, {}
    for path in paths:
        with open_h5(path) as f:
            rows = f["results"][:]
            times = f["samples"]["time_us"][:] if "samples" in f else []
        for r in rows:
            coll = text(r["collective"])
            if r["in_place"] or r["bytes"] == 0 or not r["time_us"] > 0:
                continue
            key = (text(r["type"]), text(r["op"]))
            if first.setdefault(coll, key) != key:
                continue
            case = (coll, text(r["algorithm"]), int(r["bytes"]))
            by_case.setdefault(case, []).append((float(r["time_us"]), float(r["busbw_GBps"])))
            lo, n = int(r["sample_offset"]), int(r["sample_count"])
            samples.setdefault(case, []).extend(float(t) for t in times[lo:lo + n] if math.isfinite(t))
    out = {}
    for case, reps in by_case.items():
        time_us, busbw = sorted(reps)[(len(reps) - 1) // 2]
        pooled = sorted(samples.get(case, []))
        mid = pooled[(len(pooled) - 1) // 2] if pooled else 0.0
        out[case] = (time_us, busbw, min(time_us, mid) if mid > 0 else time_us)
    return out


def fit_line(points):
    """t = alpha + beta S weighted by 1/t^2, alpha >= 0 (the report's fit_alpha_beta): alpha, bandwidth in
    GB/s, R^2 on the unweighted times, the largest relative residual."""
    w = [1.0 / (t * t) for _, t in points]
    sw = sum(w)
    xm = sum(wi * x for wi, (x, _) in zip(w, points)) / sw
    ym = sum(wi * t for wi, (_, t) in zip(w, points)) / sw
    sxx = sum(wi * (x - xm) ** 2 for wi, (x, _) in zip(w, points))
    sxy = sum(wi * (x - xm) * (t - ym) for wi, (x, t) in zip(w, points))
    beta = sxy / sxx
    alpha = ym - beta * xm
    if alpha < 0:  # a latency is never negative: the best line with alpha >= 0, through the origin
        alpha = 0.0
        sx2 = sum(wi * x * x for wi, (x, _) in zip(w, points))
        beta = sum(wi * x * t for wi, (x, t) in zip(w, points)) / sx2 if sx2 > 0 else 0.0
    mean = sum(t for _, t in points) / len(points)
    ss_res = sum((t - alpha - beta * x) ** 2 for x, t in points)
    ss_tot = sum((t - mean) ** 2 for _, t in points)
    r2 = 1 - ss_res / ss_tot if ss_tot > 0 else (1.0 if ss_res == 0 else 0.0)
    max_rel = max(abs(alpha + beta * x - t) / t for x, t in points)
    return alpha, (1e-3 / beta if beta > 0 else math.inf), r2, max_rel


def check_fits(c, cases, report):
    """fits.csv: per algorithm the regimes tile its sizes in order; each regime's line, refitted
    here from the times in its range, matches; the verdict follows the rule (R^2 >= 0.9 fits,
    else every time within 15% of alpha flat, else does not fit) and no number is printed where
    the line does not hold."""
    rows = read_csv(os.path.join(report, "fits.csv"))
    regimes = {}
    for row in rows:
        regimes.setdefault((row["collective"], row["algorithm"]), []).append(row)
    for (coll, algo), rs in regimes.items():
        sizes = sorted(b for (c2, a2, b) in cases if (c2, a2) == (coll, algo))
        used = []
        for row in rs:
            lo, hi = float(row["from_bytes"]), float(row["to_bytes"])
            points = [(b, cases[(coll, algo, b)][2]) for b in sizes if lo * (1 - REL) <= b <= hi * (1 + REL)]
            used += [b for b, _ in points]
            where = f"fits.csv {coll} {algo} regime {row['regime']}"
            if len(points) != int(row["sizes"]) or len(points) < 2:
                c.mismatches.append(f"{where}: {len(points)} sizes in {row['from_bytes']}..{row['to_bytes']} B, "
                                    f"the report says {row['sizes']}")
                continue
            alpha, bandwidth, r2, max_rel = fit_line(points)
            c.expect(f"{where} R2", r2, row["R2"])
            c.expect(f"{where} max_rel_error", max_rel, row["max_rel_error"], rel=6e-3)
            flat = all(abs(t - alpha) <= 0.15 * t for _, t in points)
            verdict = "fits" if r2 >= 0.9 else "flat" if flat else "does not fit"
            c.compared += 1
            if row["fit"] != verdict:
                c.mismatches.append(f"{where}: R^2 {r2:.4g}, off by {max_rel:.3g}: {verdict}, the report says {row['fit']!r}")
            if verdict != "does not fit":
                c.expect(f"{where} alpha_us", alpha, row["alpha_us"])
            if verdict == "fits":
                c.expect(f"{where} bandwidth_GBps", bandwidth, row["bandwidth_GBps"])
            elif row["bandwidth_GBps"] != "-" or (verdict == "does not fit" and row["alpha_us"] != "-"):
                c.mismatches.append(f"{where}: a number printed for a line that does not hold")
        c.compared += 1
        if used != sizes:
            c.mismatches.append(f"fits.csv {coll} {algo}: the regimes do not tile the {len(sizes)} sizes")


def check_bench(paths, report):
    c = Checker()
    cases = pooled_cases(paths)
    tables = {}
    for (coll, algo, size), (time_us, busbw, typical_us) in sorted(cases.items()):
        if coll not in tables:
            tables[coll] = {size_key: row for size_key, row in
                            ((float(row["size_bytes"]), row) for row in read_csv(os.path.join(report, coll + ".csv")))}
        match = [row for s, row in tables[coll].items() if abs(s - size) <= 1e-3 * size]
        if len(match) != 1:
            c.mismatches.append(f"{coll}.csv: no line for {size} B")
            continue
        c.expect(f"{coll}.csv {algo} {size} B time_us", time_us, match[0].get(algo + "_us", "-"))
        c.expect(f"{coll}.csv {algo} {size} B busbw", busbw, match[0].get(algo + "_busbw", "-"))
        c.expect(f"{coll}.csv {algo} {size} B fitted_us", typical_us, match[0].get(algo + "_fitted_us", "-"))
    if not cases:
        c.mismatches.append(f"{' '.join(paths)}: no out-of-place measurements")
    else:
        check_fits(c, cases, report)
    names = " ".join(os.path.basename(p) for p in paths)
    return c.finish(f"bench {names} vs {report} ({len(tables)} collectives)")


def breakdown(path):
    with open_h5(path) as f:
        b = f["breakdown"][:]
        nranks = int(f["meta"].attrs["nranks"]) if "nranks" in f["meta"].attrs else 0
    return b, nranks


def by_iteration(b):
    """The breakdown's rows by iteration: {iteration: [rows of every rank]}."""
    steps = {}
    for r in b:
        steps.setdefault(int(r["iteration"]), []).append(r)
    return steps


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
    # The activities a step ran, mean over ranks (iterations.csv's kernels and communications).
    steps = by_iteration(b)
    lines = {int(row["step"]): row for row in read_csv(os.path.join(report, "iterations.csv"))}
    for it, rs in steps.items():
        row = lines.get(it)
        if row is None:
            c.mismatches.append(f"iterations.csv: no line for step {it}")
            continue
        for field in ("kernels", "communications"):
            c.expect(f"iterations.csv step {it} {field}", sum(float(r[field]) for r in rs) / len(rs),
                     row.get(field, "-"))
    return c.finish(f"profile {os.path.basename(path)} vs {report} ({len(b)} rows)")


def attributes(path):
    with open_h5(path) as f:
        a = f["meta"]["attributes"].attrs if "attributes" in f["meta"] else {}
        return {k: (v.decode() if isinstance(v, bytes) else str(v)) for k, v in a.items()}


def summarize(path):
    """Per iteration (the first dropped when there are more): the slowest rank's step, the mean
    over ranks of communication and kernel time; averaged over iterations, in ms; and the run's
    layout and model from its attributes."""
    b, nranks = breakdown(path)
    steps = by_iteration(b)
    keys = sorted(steps)
    if len(keys) > 1:
        keys = keys[1:]
    t_iter = sum(max(float(r["window_ns"]) for r in steps[k]) for k in keys) / len(keys) / 1e6
    t_comm = sum(sum(float(r["comm_ns"]) for r in steps[k]) / len(steps[k]) for k in keys) / len(keys) / 1e6
    t_comp = sum(sum(float(r["kernel_ns"]) for r in steps[k]) / len(steps[k]) for k in keys) / len(keys) / 1e6
    a = attributes(path)
    tp, pp, m = (max(1, int(a.get(k, "1"))) for k in ("tp", "pp", "micro_batches"))
    layout = f"({nranks // (tp * pp)},{tp},{pp})" + (f" x{m}" if m > 1 else "")
    # communication by group, per (rank, iteration) row over the same iterations
    groups = {"tp": 0.0, "pp": 0.0, "dp": 0.0}
    rows = sum(len(steps[k]) for k in keys)
    with open_h5(path) as f:
        strings = f["strings"].asstr()[:] if "strings" in f else []
        ranks = f["ranks"][:] if "ranks" in f else []
        for name in f["events"] if "events" in f else []:
            e = f["events"][name][:]
            for start, end, kind, it, nm in zip(e["start_ns"], e["end_ns"], e["kind"], e["iteration"], e["name"]):
                if int(kind) != 5 or int(it) not in keys:
                    continue
                n = strings[int(nm)] if int(nm) < len(strings) else ""
                g = "tp" if n.startswith("tp.") else "pp" if n.startswith(("pp.", "embedding.")) else "dp"
                groups[g] += float(end - start) / 1e6
    for g in groups:
        groups[g] /= max(rows, 1)
    threads = max(1, int(a.get("threads", "1")))
    cpus, cores = cores_of(ranks, threads, int(a.get("node_cpus", "0")))
    d, l, s_, v = (int(a.get(k, "0")) for k in ("channels", "layers", "seq", "vocab"))
    gb = float(a.get("global_batch", "0"))
    b_mb = gb / (nranks // (tp * pp) * m) if gb > 0 else 0
    flops = (b_mb * (72 * s_ * d * d + 12 * s_ * s_ * d) * l + 6 * b_mb * s_ * d * v) * m / (tp * pp)
    return {"ranks": nranks, "layout": layout, "t_iter": t_iter, "t_comp": t_comp, "t_comm": t_comm,
            "groups": groups, "cpus": cpus, "cores": cores, "flops": flops}


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def cpu_list(s):
    """The CPUs of an affinity list ("0-3,8"), or None for a malformed one."""
    cpus = set()
    for piece in s.split(",") if s else []:
        lo, _, hi = piece.partition("-")
        if not lo.isdigit() or (hi and not hi.isdigit()) or (hi and int(hi) < int(lo)):
            return None
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return cpus


def cores_of(ranks, threads, node_cpus):
    """(the fewest CPUs a rank had, the cores of all ranks): from /ranks' placement, per machine
    (boot id, else host) the CPUs its ranks' affinities cover, at most node_cpus and ranks x
    threads; without it, per host min(node_cpus, ranks x threads) from the attributes."""
    names = ranks.dtype.names if len(ranks) else ()
    if "cpus" in names and all(int(r["cpu_count"]) > 0 and int(r["node_cpus"]) > 0 for r in ranks):
        by_host = "machine" not in names or all(not text(r["machine"]) for r in ranks)
        machines = {}
        for r in ranks:
            key = "host " + text(r["host"]) if by_host or not text(r["machine"]) else text(r["machine"])
            m = machines.setdefault(key, {"ranks": 0, "node": 0, "cpus": set(), "listed": 0})
            m["ranks"] += 1
            m["node"] = max(m["node"], int(r["node_cpus"]))
            listed = cpu_list(text(r["cpus"]))
            if listed is not None and len(listed) == int(r["cpu_count"]):
                m["cpus"] |= listed
            else:
                m["listed"] += int(r["cpu_count"])
        per = [min(min(m["node"], len(m["cpus"]) + m["listed"]), m["ranks"] * threads) for m in machines.values()]
        return min(c / m["ranks"] for c, m in zip(per, machines.values())), sum(per)
    hosts = [text(r["host"]) for r in ranks]
    cpus = threads
    if node_cpus > 0 and hosts:
        cpus = min(threads, node_cpus / max(hosts.count(h) for h in hosts))
    return cpus, len(hosts) * cpus


def row_of(c, rows, r, table):
    """The run's (ranks, layout) row of a table, or None with a mismatch; and its name."""
    key = f"{r['ranks']} ranks {r['layout']}"
    row = rows.get((str(r["ranks"]), r["layout"]))
    if row is None:
        c.mismatches.append(f"{table}: no line for {key}")
    return key, row


def check_scaling(paths, report):
    c = Checker()
    runs = sorted((summarize(p) for p in paths), key=lambda r: r["ranks"])
    rows = {(row["ranks"], row.get("layout", "")): row for row in read_csv(os.path.join(report, "scaling.csv"))}
    base = min(runs, key=lambda r: (r["ranks"], r["layout"] != f"({r['ranks']},1,1)"))
    for r in runs:
        key, row = row_of(c, rows, r, "scaling.csv")
        if row is None:
            continue
        c.expect(f"scaling.csv {key} t_iter_ms", r["t_iter"], row["t_iter_ms"])
        c.expect(f"scaling.csv {key} t_comp_ms", r["t_comp"], row["t_comp_ms"])
        c.expect(f"scaling.csv {key} t_comm_ms", r["t_comm"], row["t_comm_ms"])
        c.expect(f"scaling.csv {key} speedup", base["t_iter"] / r["t_iter"], row["speedup"])
        c.expect(f"scaling.csv {key} cores", r["cores"], row["cores"])
        if base["ranks"] == 1:  # no communication to scale from: no efficiency, no prediction
            for col in ("comm_eff", "predicted_speedup", "prediction_error"):
                if row[col] != "-":
                    c.mismatches.append(f"scaling.csv {key} {col}: {row[col]} against a 1-rank baseline, wanted -")
        else:
            c.expect(f"scaling.csv {key} comm_eff", base["t_comm"] / r["t_comm"], row["comm_eff"])
    predicted = os.path.join(report, "predicted_vs_measured.csv")
    if os.path.isfile(predicted):
        prows = {(row["ranks"], row["layout"]): row for row in read_csv(predicted)}
        per_cpu = base["flops"] / base["t_comp"] / base["cpus"]  # FLOP per ms and CPU
        for r in runs:
            key, row = row_of(c, prows, r, "predicted_vs_measured.csv")
            if row is None:
                continue
            c.expect(f"predicted_vs_measured.csv {key} measured_ms", r["t_iter"], row["measured_ms"])
            for g in ("tp", "pp", "dp"):
                c.expect(f"predicted_vs_measured.csv {key} {g}_ms", r["groups"][g], row[f"{g}_ms"])
            c.expect(f"predicted_vs_measured.csv {key} predicted_compute_ms", r["flops"] / (per_cpu * r["cpus"]),
                     row["predicted_compute_ms"])
            if row["error"] != "-":
                # the error (%) against the printed prediction: printed to 0.1% (-45.2% is -45.25% to
                # -45.15%: 0.05 absolute), the predicted time to 4 digits (its rounding, 1e-3 of the
                # ratio, is what rel covers; a relative bound on 1 + error fails near -100%)
                ratio = float(row["predicted_ms"]) / r["t_iter"]
                c.expect(f"predicted_vs_measured.csv {key} error %", (ratio - 1) * 100, row["error"],
                         rel=0.0, abs_tol=0.05 + 0.1 * ratio)
                # the step is the sum of its predicted parts (the bubble is in pp)
                parts = sum(float(row[f"predicted_{g}_ms"]) for g in ("compute", "tp", "pp", "dp"))
                c.expect(f"predicted_vs_measured.csv {key} predicted_ms = sum of parts", parts, row["predicted_ms"],
                         rel=2e-3)
                # each part's error against its printed times, as the step's
                for g in ("compute", "tp", "pp", "dp"):
                    measured, pred = float(row[f"{g}_ms"]), float(row[f"predicted_{g}_ms"])
                    if measured <= 0:
                        if row[f"{g}_error"] != "-":
                            c.mismatches.append(f"predicted_vs_measured.csv {key} {g}_error: {row[f'{g}_error']} "
                                                "where nothing was measured, wanted -")
                        continue
                    ratio = pred / measured
                    c.expect(f"predicted_vs_measured.csv {key} {g}_error %", (ratio - 1) * 100, row[f"{g}_error"],
                             rel=0.0, abs_tol=0.05 + 0.1 * ratio + 5e-3 * abs(ratio - 1) * 100)
            # the measured step is its parts and the rest
            rest = r["t_iter"] - r["t_comp"] - sum(r["groups"].values())
            c.expect(f"predicted_vs_measured.csv {key} rest_ms", rest, row["rest_ms"], abs_tol=1e-3 * r["t_iter"])
    return c.finish(f"scaling {' '.join(os.path.basename(p) for p in paths)} vs {report}")


def main(argv):
    if len(argv) >= 2 and argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    if len(argv) >= 4 and argv[1] == "bench":
        return check_bench(argv[2:-1], argv[-1])
    if len(argv) == 4 and argv[1] == "profile":
        return check_profile(argv[2], argv[3])
    if len(argv) >= 5 and argv[1] == "scaling":
        return check_scaling(argv[2:-1], argv[-1])
    fail_usage("usage: check-report.py profile FILE.h5 REPORT_DIR, or bench|scaling A.h5 [B.h5...] REPORT_DIR")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
