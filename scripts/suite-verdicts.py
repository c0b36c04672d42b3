#!/usr/bin/env python3
"""The suite summary's verdicts: from commscope-report bench's "Verdict:" lines (its stdout or
report.md), the largest size range of each collective and algorithm, counted by verdict, and the
few furthest below their model (docs/verdicts.md) printed whole (not decided ones, whose margin lies
inside what the machine's own figures or its load allow, are counted apart); where none is below, the one
highest against its model (an "above the model" one first: a figure of the model is too low). At most 1 + MAX lines; nothing for a report without verdicts (a results file
without a machine model).

    suite-verdicts.py REPORT_TEXT [MAX]   (MAX: lines besides the counts, default 3)
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


def main(argv):
    if len(argv) not in (2, 3):
        sys.exit("usage: suite-verdicts.py REPORT_TEXT [MAX]")
    most = int(argv[2]) if len(argv) == 3 else 3
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
    judged = [v for v in largest.values() if v[2] is not None]
    low = sorted((v for v in judged if v[1] in ("below", "far below")), key=lambda v: v[2])
    shown = low[:most] if low else sorted(judged, key=lambda v: -v[2])[:1]
    for line, _, _ in shown:
        print("  " + line)


if __name__ == "__main__":
    main(sys.argv)
