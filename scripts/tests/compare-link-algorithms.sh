#!/usr/bin/env bash
# compare-link-algorithms.sh COMPARE BINDIR OUT: compare-interconnects.sh (COMPARE, --quick, 1 KiB)
# compares only what crosses the transport: no shm or hier (shared memory inside the node) in the
# link table's header beside the link's algorithms, and the shared-memory transport is named
# vader, not shm (the algorithm's name).
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
