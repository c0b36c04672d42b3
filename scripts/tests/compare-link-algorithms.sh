#!/usr/bin/env bash
# compare-link-algorithms.sh COMPARE BINDIR OUT: compare-interconnects.sh (COMPARE, --quick, 1 KiB)
# compares only what crosses the transport: no shm or hier (shared memory inside the node) in the
# link table's header beside the link's algorithms, and the shared-memory transport is named
# vader, not shm (the algorithm's name); its times are medians, and the shaped loopback's expectation
# is the rate each flow gets.
set -u
compare=$1 bindir=$2 out=$3
fail() { echo "compare-link-algorithms.sh: FAIL: $*"; exit 1; }
said=$(bash "$compare" --quick --size 1K --bin "$bindir" --out "$out" 2>&1) ||
  { printf '%s\n' "$said"; fail "compare-interconnects.sh exited with status $?"; }
printf '%s\n' "$said" | grep -A4 'allreduce busbw'
header=$(printf '%s\n' "$said" | grep -E '^  link +size')
[ -n "$header" ] || fail "no link table"
if printf '%s\n' "$header" | grep -qwE 'shm|hier'; then fail "shm or hier beside the link's algorithms: $header"; fi
printf '%s\n' "$said" | grep -q '^== vader:' || fail "no run of the vader transport"
if printf '%s\n' "$said" | grep -q '^== shm'; then fail "a transport named shm"; fi
# The comparison's times are each size's typical call (the median), not a mean a stalled call
# can raise a thousandfold.
grep -q "typical call, the median of its calls" "$out/compare.txt" || fail "the comparison does not say its times are medians"
# The shaped loopback carries its rate in all, shared by both directions and every rank's flow of
# a step: the slow run's model has the rate between its ranks at 1gbit / 2 ranks = 0.0625 GB/s,
# not the 0.125 its one-way ping-pong reads (the ring at the link's limit then read "far below").
if [ -f "$out/slow.h5" ] && command -v h5dump >/dev/null; then
  h5dump -a /meta/machine_model "$out/slow.h5" | grep -q 'intra=0.0625GB/s intra.source=user' ||
    fail "the slow run's model does not give the shaped loopback's rate per flow: $(h5dump -a /meta/machine_model "$out/slow.h5")"
fi
echo "compare-link-algorithms.sh: ok"
