#!/usr/bin/env python3
"""The suite summary's verdicts: from commscope-report bench's "Verdict:" lines (its stdout or
report.md), the largest size range of each collective and algorithm, counted by verdict, and the
few furthest below their model (docs/verdicts.md) printed whole (not decided ones, whose margin lies
inside what the machine's own figures or its load allow, are counted apart); where none is below, the one
highest against its model (an "above the model" one first: a figure of the model is too low). At most 1 + MAX lines; nothing for a report without verdicts (a results file
without a machine model). With --bench-log, where the bench's own figures moved by a quarter or
more between the start and the end of its run (its "# machine: ... between the start and the end
of the run" lines: a machine that changed speed by itself, docs/verdicts.md "Stable inputs"), a
line after the counts naming the node figure that moved most, how many other nodes moved as
much, and the latency, and one fewer of the furthest below.

    suite-verdicts.py REPORT_TEXT [MAX] [--bench-log BENCH_LOG]   (MAX: lines besides the counts, default 3)
"""
import re
import sys

CLASSES = ("good", "below", "far below", "above the model", "not decided")


def parse(line):
    """(collective, algorithm, verdict, of_expected) of one line; verdict 'not judged' without a figure."""
    head, _, rest = line.partition(": ")
    words = head.split()
    if len(words) < 2:
        return None
    if rest.startswith("not judged"):
        return words[0], words[1], "not judged", None
    verdict = None
    for m in re.finditer(r": (good|below|far below|above the model|not decided)\b", line):
        verdict = m.group(1)
    if verdict is None:
        return None
    m = re.search(r"\[\d+ sizes(?:: median|, all) ([0-9.e+-]+)%", line) or re.search(r"= ([0-9.e+-]+)% of", line)
    return words[0], words[1], verdict, float(m.group(1)) / 100 if m else None


MOVED_AT_LEAST = 25  # percent


def moved_line(bench_log):
    """The machine's movement between the bench's start and end in one line; "" where nothing
    moved by MOVED_AT_LEAST percent or more."""
    top, line, nodes, latency = 0.0, "", 0, None
    for raw in open(bench_log, encoding="utf-8", errors="replace"):
        if not raw.startswith("# machine: ") or " between the start and the end of the run: " not in raw:
            continue
        m = re.search(r"moved (?:up to )?([0-9.]+)%", raw)
        if not m or float(m.group(1)) < MOVED_AT_LEAST:
            continue
        moved = float(m.group(1))
        if raw.startswith("# machine: the latency per message"):
            latency = m.group(1)
            continue
        node = re.match(r"# machine: (.*) between the start and the end of the run: (\S+) moved up to [0-9.]+% "
                        r"\(at (.*?) a rank", raw)
        if not node:
            continue
        nodes += 1
        if moved > top:
            top, line = moved, f"{node.group(1)}'s {node.group(2)} up to {m.group(1)}% at {node.group(3)} a rank"
    if nodes > 1:
        line += f" (and {nodes - 1} other node{'s' if nodes > 2 else ''}'s figures)"
    if latency:
        line += ("; " if line else "") + f"latency {latency}%"
    return line


def main(argv):
    bench_log = None
    if "--bench-log" in argv:
        at = argv.index("--bench-log")
        if at + 1 >= len(argv):
            sys.exit("usage: suite-verdicts.py REPORT_TEXT [MAX] [--bench-log BENCH_LOG]")
        bench_log = argv[at + 1]
        argv = argv[:at] + argv[at + 2:]
    if len(argv) not in (2, 3):
        sys.exit("usage: suite-verdicts.py REPORT_TEXT [MAX] [--bench-log BENCH_LOG]")
    most = int(argv[2]) if len(argv) == 3 else 3
    moved = moved_line(bench_log) if bench_log else ""
    largest = {}  # (collective, algorithm) -> (line, verdict, of_expected): the last range, the largest sizes
    for raw in open(argv[1], encoding="utf-8", errors="replace"):
        if not raw.startswith("Verdict: "):
            continue
        line = raw[len("Verdict: "):].rstrip("\n").rstrip(".")
        p = parse(line)
        if p is None:
            continue
        key = (p[0], p[1])
        if p[2] == "not judged" and key in largest:
            continue  # "not judged at some sizes" before the ranges that were
        largest[key] = (line, p[2], p[3])
    if not largest:
        return
    counts = {c: 0 for c in CLASSES + ("not judged",)}
    for _, verdict, _ in largest.values():
        counts[verdict] += 1
    print("  at the largest sizes, per collective and algorithm: " +
          ", ".join(f"{n} {c}" for c, n in counts.items() if n))
    if moved:
        print("  The machine moved during the bench (allowed for): " + moved)
        most = max(0, most - 1)
    judged = [v for v in largest.values() if v[2] is not None]
    low = sorted((v for v in judged if v[1] in ("below", "far below")), key=lambda v: v[2])
    shown = low[:most] if low else sorted(judged, key=lambda v: -v[2])[:1]
    for line, _, _ in shown:
        print("  " + line)


if __name__ == "__main__":
    main(sys.argv)
