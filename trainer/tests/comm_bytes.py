#!/usr/bin/env python3
"""The bytes a data-parallel mode communicates in one step, from a commscope-train profile, against
the arithmetic of docs/trainer.md.

  comm_bytes.py PROFILE.h5 MODE RANKS VP MAXT C L [PREDICT_DIR]

For every rank, the communication events of iteration 1 are summed by name (allreduce,
reducescatter, allgather: what CpuEngine records, in bytes per call) and must equal, exactly:
  segments: 0 = wte + wpe ((VP + MAXT) C floats), 1..L = a layer (12 C^2 + 13 C), L+1 = lnf (2 C);
  ZeRO pads each to a multiple of RANKS (n').
  ddp    allreduce: every gradient (the buckets tile the buffer) + the loss (8 B)
  zero1  reducescatter: sum n'; allgather: sum n'; allreduce: the loss and the norm (16 B)
  zero2  the same as zero1 (the reduce-scatters move into backward)
  zero3  reducescatter: sum n'; allgather: forward every segment plus segment 0 again for the
         tied head, backward every segment but segment 0 plus segment 0 for the head once:
         3 n'_0 + 2 sum_layers n' + 2 n'_lnf; allreduce 16 B
(4 bytes a float). The encoder's backward reads no parameters: an all-gather for it is a defect.

With PREDICT_DIR (commscope-report predict -o PREDICT_DIR for the same model, rank count, ZeRO
stage and --bytes-per-param 4), its communication.csv must price the collectives the trainer
made, each within 1% of the bytes the trainer moved (the table prints 4 significant digits; the
trainer also pads the shards and reduces its 8- or 16-byte scalars, which predict leaves out).
"""
import csv
import re
import sys

import h5py


def main():
    path, mode = sys.argv[1], sys.argv[2]
    ranks, vp, maxt, c, layers = (int(x) for x in sys.argv[3:8])
    seg0, layer, lnf = (vp + maxt) * c, 12 * c * c + 13 * c, 2 * c
    total = seg0 + layers * layer + lnf
    pad = lambda n: (n + ranks - 1) // ranks * ranks
    padded = pad(seg0) + layers * pad(layer) + pad(lnf)
    want = {
        "ddp": {"allreduce": 4 * total + 8},
        "zero1": {"reducescatter": 4 * padded, "allgather": 4 * padded, "allreduce": 16},
        "zero2": {"reducescatter": 4 * padded, "allgather": 4 * padded, "allreduce": 16},
        "zero3": {"reducescatter": 4 * padded,
                  "allgather": 4 * (3 * pad(seg0) + 2 * layers * pad(layer) + 2 * pad(lnf)),
                  "allreduce": 16},
    }[mode]
    f = h5py.File(path, "r")
    strings = [s.decode() for s in f["strings"][:]]
    ok = True
    for r in range(ranks):
        events = f["events/rank%05d" % r][:]
        got = {}
        for e in events:
            if e["kind"] != 5 or e["iteration"] != 1:  # communication, the second step
                continue
            name = strings[e["name"]]
            got[name] = got.get(name, 0) + int(e["bytes"])
        same = got == want
        ok = ok and same
        print("rank %d %s: %s, wanted %s: %s" % (r, mode, got, want, "ok" if same else "FAIL"))
    if len(sys.argv) > 8:
        ok = compare_prediction(sys.argv[8], want) and ok
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1




def compare_prediction(folder, measured):
    predicted = {}
    with open(folder + "/communication.csv", newline="") as f:
        for row in csv.DictReader(f):
            m = re.fullmatch(r"[0-9.]+(?:e[+-]?[0-9]+)?", row["per_call_bytes"])
            if not m:
                print("predict: cannot read per_call_bytes %r" % row["per_call_bytes"])
                return False
            b = float(m.group(0)) * int(row["calls"])
            predicted[row["collective"]] = predicted.get(row["collective"], 0) + b
    ok = True
    for name in sorted(set(predicted) | set(measured)):
        got, want = predicted.get(name, 0), measured.get(name, 0)
        if want <= 16:  # the trainer's scalars (loss, norm): not parameter traffic
            want = 0
        same = abs(got - want) <= 0.01 * max(want, 1)
        ok = ok and same
        print("predict %s: %.0f bytes, trainer %d: %s" % (name, got, want, "ok" if same else "FAIL"))
    return ok


if __name__ == "__main__":
    sys.exit(main())
