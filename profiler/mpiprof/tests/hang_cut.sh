#!/usr/bin/env bash
# A cut link (label cluster): 3 emulated hosts x 1 rank run tests/mpi_gap.c 'none' (64 KiB
# allreduces, 1 ms of compute between them) under libcommscope-mpiprof.so with a 2 s watchdog;
# host3's link is deleted mid-run (emulate-cluster.sh cut). Every rank stays in the allreduce it
# was in, one that every member reached and no late rank or desync holds: commscope-report hang
# must say so (a stall). Exit 77 where no cluster can be made here.
#   hang_cut.sh PREFIX WORKDIR BINDIR LIB APP
set -uo pipefail
prefix=$1 work=$2 bin=$3 lib=$4 app=$5
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
. "$root/scripts/tests/own-cluster.sh"  # own_cluster, $emulate
me=hang_cut.sh
. "$(dirname "${BASH_SOURCE[0]}")/records.sh"  # wait_for_records, hang_verdict
fail() { echo "$me: FAIL: $*"; exit 1; }
own_cluster "$prefix" 3 --slots 1
dir=$work/hang-cut
rm -rf "$dir" && mkdir -p "$dir" || exit 1
"$emulate" mpirun --prefix "$prefix" -np 3 --map-by ppr:1:node -x LD_PRELOAD="$lib" -x COMMSCOPE_HANG_TIMEOUT=2 \
  -x COMMSCOPE_PROFILE_OUT="$dir/p.h5" -x GAP_COMPUTE_MS=1 "$app" none 1000000 65536 >"$dir/run.log" 2>&1 &
job=$!
sleep 3
kill -0 $job 2>/dev/null || fail "the program ended before the cut (log: $dir/run.log)"
"$emulate" cut host3 --prefix "$prefix" || fail "no cut"
wait_for_records "$dir/p.flight" 3 15  # the three watchdogs' records
rm -rf "$dir/records" && mkdir -p "$dir/records" && cp "$dir/p.flight"/*.flight "$dir/records/" 2>/dev/null
kill -TERM $job 2>/dev/null
found=$(ls "$dir/records" | grep -c '\.flight$')
[ "$found" = 3 ] || fail "$found of 3 ranks wrote a flight record (log: $dir/run.log)"
hang_verdict "$bin/commscope-report" "$dir/records"
# Each rank stays in the allreduce it was in when the link went: all in the same one, or those that
# had host3's part already completed it and wait in the next.
grep -Eq "^Verdict: (every member of world, ranks 0-2 \(on host1, host2, host3\), has been in allreduce #[0-9]+|allreduce #[0-9]+ on world has not completed on ranks? [0-9, -]+ \(on [^)]+\), in it for [^,]+, where ranks? [0-9, -]+ completed it).*: a call all members reached does not complete" <<<"$line" ||
  fail "the verdict does not say that a call every member reached does not complete"
echo "$me: ok"
