#!/usr/bin/env python3
"""Every communication instance that the profile matches across ranks is one operation.

  instance_matching.py PROFILE.h5

The breakdown splits a communication into wait and transfer by matching it across ranks on
(communicator, seq). For that to mean anything, every matched instance must be the same
operation on every rank that has it:
  - a collective's communicator label "kind[ranks]" (e.g. "tp[0,1]", "dp[0:14:2]") names its
    members: exactly those ranks have the instance, all under one name with one byte count;
  - a message's label "kind[a>b]": rank a sends it (pp.send, and possibly the send's completion
    with 0 bytes), rank b receives it (one pp.recv of the same bytes), and no one else has it;
  - the profiled communicator (label ""): every rank, one name, one byte count.
Files without the communicator column read as the profiled communicator's, as they were numbered.
Prints the instances checked by kind of label, and the first mismatches; exit 1 on any.
"""
import re
import sys
from collections import defaultdict

import h5py

COMMUNICATION = 5  # EventKind::kCommunication


def members(label):
    """The ranks a collective's label names: "tp[0,1]" -> [0, 1], "dp[0:6:2]" -> [0, 2, 4, 6]."""
    inside = label[label.index("[") + 1:-1]
    if ":" in inside:
        first, last, step = (int(x) for x in inside.split(":"))
        return list(range(first, last + 1, step))
    return [int(x) for x in inside.split(",")]


def main():
    f = h5py.File(sys.argv[1], "r")
    strings = [s.decode() for s in f["strings"][:]]
    nranks = int(f["meta"].attrs["nranks"])
    # (label, seq) -> rank -> [(name, bytes)]
    instances = defaultdict(lambda: defaultdict(list))
    for r in range(nranks):
        ev = f["events/rank%05d" % r][:]
        has_comm = "communicator" in ev.dtype.names
        for e in ev:
            if e["kind"] != COMMUNICATION or e["seq"] < 0:
                continue
            label = strings[e["communicator"]] if has_comm else ""
            instances[(label, int(e["seq"]))][r].append((strings[e["name"]], int(e["bytes"])))

    problems = []
    counts = defaultdict(int)
    for (label, seq), by_rank in sorted(instances.items()):
        where = "%s #%d: %s" % (label or "(profiled communicator)", seq,
                                "; ".join("rank %d %s" % (r, by_rank[r]) for r in sorted(by_rank)))
        link = re.fullmatch(r"[a-z]+\[(\d+)>(\d+)\]", label)
        if link:
            counts["message"] += 1
            a, b = int(link.group(1)), int(link.group(2))
            sends = by_rank.get(a, [])
            recvs = by_rank.get(b, [])
            sent = [n for name, n in sends if n > 0]
            if (set(by_rank) != {a, b} or len(recvs) != 1 or not recvs[0][0].endswith(".recv")
                    or any(not name.endswith(".send") for name, _ in sends) or len(sent) != 1
                    or sent[0] != recvs[0][1]):
                problems.append("message " + where)
            continue
        ranks = list(range(nranks)) if label == "" else members(label)
        counts["collective" if label else "profiled communicator"] += 1
        ops = {op for ops in by_rank.values() for op in ops}
        if sorted(by_rank) != ranks or len(ops) != 1 or any(len(v) != 1 for v in by_rank.values()):
            problems.append("collective " + where)

    total = sum(counts.values())
    print("%d matched instances: %s" % (total, ", ".join("%d %s" % (n, k) for k, n in sorted(counts.items()))))
    for p in problems[:10]:
        print("MISMATCH", p)
    if problems:
        print("%d of %d matched instances name different operations or ranks" % (len(problems), total))
        return 1
    return 0 if total > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
