#!/usr/bin/env python3
"""The bytes of one step per communication group, from a commscope-train profile, against what
commscope-report predict prices for the same model and layout.

  predict_bytes.py PROFILE.h5 PREDICT_DIR TP PP

For every rank, the communication events of iteration 1 are summed by group (the name's prefix:
tp.*, pp.*, embedding.*, the rest data parallel; profiler::communication_group). predict's
communication.csv prices one rank of the last stage (the busiest: segment 0, the final layernorm,
the head and its cross-entropy), its rows summed by group (bytes_per_call x calls; the purpose
names the group: "(tp", "(pp", "embedding", the rest data parallel). A rank of the last stage must
move each group's bytes within 1% of predict's; a rank of another stage no more than predict's
plus 1%. Left out: the trainer's scalars (the loss and the norm, 8 B each) and, with one
data-parallel rank, its collectives over that one rank (they move nothing; predict lists none).
"""
import csv
import re
import sys

import h5py

GROUPS = ("tp", "pp", "embedding", "dp")


def group_of_name(name):
    prefix = name.split(".", 1)[0]
    return prefix if "." in name and prefix in ("tp", "pp", "embedding") else "dp"


def group_of_purpose(purpose):
    for marker, group in (("(tp", "tp"), ("(pp", "pp"), ("embedding", "embedding")):
        if marker in purpose:
            return group
    return "dp"


def predicted(folder):
    out = dict.fromkeys(GROUPS, 0.0)
    with open(folder + "/communication.csv", newline="") as f:
        for row in csv.DictReader(f):
            m = re.fullmatch(r"[0-9.]+(?:e[+-]?[0-9]+)?", row["per_call_bytes"])
            if not m:
                sys.exit("predict_bytes: cannot read per_call_bytes %r" % row["per_call_bytes"])
            out[group_of_purpose(row["purpose"])] += float(m.group(0)) * int(row["calls"])
    return out


def measured(f, rank, strings, dp):
    out = dict.fromkeys(GROUPS, 0)
    for e in f["events/rank%05d" % rank][:]:
        if e["kind"] != 5 or e["iteration"] != 1:  # communication, the second step
            continue
        g = group_of_name(strings[e["name"]])
        if g == "dp" and (e["bytes"] <= 16 or dp == 1):
            continue
        out[g] += int(e["bytes"])
    return out


def main():
    if len(sys.argv) != 5:
        print("usage: predict_bytes.py PROFILE.h5 PREDICT_DIR TP PP", file=sys.stderr)
        return 2
    f = h5py.File(sys.argv[1], "r")
    want = predicted(sys.argv[2])
    tp, pp = int(sys.argv[3]), int(sys.argv[4])
    strings = [s.decode() for s in f["strings"][:]]
    ranks = len([k for k in f["events"].keys() if k.startswith("rank")])
    dp = ranks // (tp * pp)
    ok = True
    for r in range(ranks):
        stage = r // (dp * tp)
        got = measured(f, r, strings, dp)
        for g in GROUPS:
            if stage == pp - 1:
                same = abs(got[g] - want[g]) <= 0.01 * max(got[g], want[g], 1)
            else:
                same = got[g] <= 1.01 * want[g]
            ok = ok and same
            print("rank %d (stage %d) %s: trainer %d bytes, predict %.0f: %s"
                  % (r, stage, g, got[g], want[g], "ok" if same else "FAIL"))
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
