#!/usr/bin/env python3
"""A program's own counts of its MPI calls against a profile's and a replay report's.

  app_counts.py profile PREFIX NRANKS DUMP.json WHAT
      every rank's communication events in DUMP.json (test_profile_dump's output), counted per
      communicator label ("all" for none) and name, equal the program's PREFIX.rankN.txt
      ("LABEL NAME CALLS BYTES" lines): calls and bytes, no kind missing, none extra. WHAT names
      the profile in the messages.
  app_counts.py report PREFIX NRANKS replay_collectives.csv
      each of the report's rows (communicator, communication) has calls and bytes, recorded and
      replayed, equal to the program's summed over its ranks, and says identical; no row missing,
      none extra.

Prints one line per difference and exits 1 if there is any, else prints a summary and exits 0.
"""
import csv
import json
import sys
from collections import defaultdict


def program_counts(prefix, nranks):
    per_rank = []
    for r in range(nranks):
        counts = {}
        with open(f"{prefix}.rank{r}.txt") as f:
            for line in f:
                label, name, calls, nbytes = line.split()
                counts[(label, name)] = (int(calls), int(nbytes))
        per_rank.append(counts)
    return per_rank


def profile_counts(dump, nranks, what, problems):
    with open(dump) as f:
        events = json.load(f)["events"]
    if len(events) != nranks:
        problems.append(f"{what}: {len(events)} ranks, wanted {nranks}")
    per_rank = []
    for rank in events:
        counts = defaultdict(lambda: [0, 0])
        for _start, _end, _seq, nbytes, name, _track, label in rank["communication"]:
            c = counts[(label or "all", name)]
            c[0] += 1
            c[1] += nbytes
        per_rank.append({k: tuple(v) for k, v in counts.items()})
    return per_rank


def compare_profile(prefix, nranks, dump, what):
    problems = []
    want = program_counts(prefix, nranks)
    got = profile_counts(dump, nranks, what, problems)
    total = 0
    for r in range(min(len(want), len(got))):
        for key in sorted(set(want[r]) | set(got[r])):
            w, g = want[r].get(key, (0, 0)), got[r].get(key, (0, 0))
            total += w[0]
            if w != g:
                problems.append(f"{what}: rank {r}: {key[0]} {key[1]}: {g[0]} calls {g[1]} B, "
                                f"the program made {w[0]} calls {w[1]} B")
    return problems, f"{what}: every rank's calls and bytes per communicator as the program's ({total} calls)"


def compare_report(prefix, nranks, table):
    problems = []
    want = defaultdict(lambda: [0, 0])
    for counts in program_counts(prefix, nranks):
        for key, (calls, nbytes) in counts.items():
            want[key][0] += calls
            want[key][1] += nbytes
    rows = {}
    with open(table) as f:
        for row in csv.DictReader(f):
            rows[(row["communicator"], row["communication"])] = row
    for key in sorted(set(want) | set(rows)):
        row = rows.get(key)
        if row is None:
            problems.append(f"report: no row {key[0]} {key[1]}; the program made {want[key][0]} calls "
                            f"{want[key][1]} B")
            continue
        w = want.get(key, [0, 0])
        columns = ("calls_recorded", "bytes_recorded_bytes", "calls_replayed", "bytes_replayed_bytes")
        got = [int(row[c]) for c in columns]
        if got != [w[0], w[1], w[0], w[1]] or row["calls_and_bytes"] != "identical":
            problems.append(f"report: {key[0]} {key[1]}: recorded {got[0]} calls {got[1]} B, replayed {got[2]} "
                            f"calls {got[3]} B, {row['calls_and_bytes']}; the program made {w[0]} calls {w[1]} B")
    calls = sum(c for c, _ in want.values())
    return problems, f"report: {len(rows)} rows, recorded and replayed as the program's ({calls} calls), all identical"


def main(argv):
    if len(argv) == 6 and argv[1] == "profile":
        problems, ok = compare_profile(argv[2], int(argv[3]), argv[4], argv[5])
    elif len(argv) == 5 and argv[1] == "report":
        problems, ok = compare_report(argv[2], int(argv[3]), argv[4])
    else:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    for p in problems:
        print(f"app_counts.py: FAIL: {p}")
    if not problems:
        print(f"app_counts.py: {ok}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
