#!/usr/bin/env bash
# The suite summary's verdicts (scripts/suite-verdicts.py) on a report's Verdict lines: the
# largest size range of each collective and algorithm counted by verdict (not decided ones too), the ones furthest below
# their model printed whole (at most MAX), the highest one where none is below, nothing for a
# report without verdicts.
set -u
dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "suite-verdicts.sh: FAIL: $*"; exit 1; }
cat >"$work/report.txt" <<'TXT'
commscope bench report: bench.h5
Verdict: allreduce ring 8 B to 4 KiB: latency-bound, 5.88 us = 51% of the speed of the expected 2.97 us (latency 2.32 us) [4 sizes: median 75%, 0.032% to 101%]: good.
Verdict: allreduce ring from 32 KiB: busbw 2.04 GB/s = 34% of the 5.92 GB/s that the link between vm's ranks (9.38 GB/s, measured) allows [2 sizes: median 17%, 0.27% to 34%]: far below.
Verdict: allreduce rhd from 32 KiB: busbw 3.32 GB/s = 56% of the 5.92 GB/s that host2's link (0.125 GB/s, given) allows [2 sizes: median 45%, 34% to 56%]: below; host2's link measured 0.012 GB/s (doctor), the others 0.116.
Verdict: allreduce hier: not judged, the model lacks host2's link rate (its NIC reports none: --link-rate host2=RATE).
Verdict: broadcast mpi: not judged at some sizes, the model lacks the latency per message.
Verdict: broadcast mpi from 1 MiB: busbw 5 GB/s = 90% of the 5.55 GB/s that vm's memory (11.1 GB/s, measured) allows [3 sizes, all 90%]: good.
Verdict: gather ring at 64 MiB: busbw 9 GB/s = 120% of the 7.5 GB/s that vm's memory (7.5 GB/s, measured) allows: above the model (a figure of the model is too low).
Verdict: allgather shm at 64 MiB: busbw 3 GB/s = 62% of the 4.8 GB/s that vm's memory (9.6 GB/s, measured) allows: not decided: on a quiet machine at its figures' best this would read 41% to 88% (the copy rate of vm moved 20% over its probe's repeats; vm: 2 ranks and other processes' 1.3 CPUs on 2 CPUs).
Verdict: scatter ring at 64 MiB: busbw 0.5 GB/s = 10% of the 4.8 GB/s that vm's memory (9.6 GB/s, measured) allows: far below (on a busy machine: vm: 2 ranks and other processes' 1.3 CPUs on 2 CPUs).
TXT
got=$(python3 "$dir/suite-verdicts.py" "$work/report.txt" 1) || fail "exit $?"
want="  at the largest sizes, per collective and algorithm: 1 good, 1 below, 2 far below, 1 above the model, 1 not decided, 1 not judged
  scatter ring at 64 MiB: busbw 0.5 GB/s = 10% of the 4.8 GB/s that vm's memory (9.6 GB/s, measured) allows: far below (on a busy machine: vm: 2 ranks and other processes' 1.3 CPUs on 2 CPUs)"
[ "$got" = "$want" ] || fail "MAX 1: got
$got"
grep -v -e 'scatter' "$work/report.txt" >"$work/quiet.txt"
got=$(python3 "$dir/suite-verdicts.py" "$work/quiet.txt" 1) || fail "exit $?"
want="  at the largest sizes, per collective and algorithm: 1 good, 1 below, 1 far below, 1 above the model, 1 not decided, 1 not judged
  allreduce ring from 32 KiB: busbw 2.04 GB/s = 34% of the 5.92 GB/s that the link between vm's ranks (9.38 GB/s, measured) allows [2 sizes: median 17%, 0.27% to 34%]: far below"
[ "$got" = "$want" ] || fail "MAX 1: got
$got"
got=$(python3 "$dir/suite-verdicts.py" "$work/report.txt") || fail "exit $?"
[ "$(printf '%s\n' "$got" | wc -l)" -eq 4 ] || fail "default MAX: 4 lines wanted: $got"
printf '%s\n' "$got" | grep -q "^  allreduce rhd from 32 KiB: .*: below; host2's link measured 0.012 GB/s (doctor), the others 0.116$" ||
  fail "the culprit's line is not shown whole: $got"
# None below: the highest against its model (above it).
grep -v -e 'below' "$work/report.txt" >"$work/good.txt"
got=$(python3 "$dir/suite-verdicts.py" "$work/good.txt") || fail "exit $?"
printf '%s\n' "$got" | sed -n 2p | grep -q "^  gather ring at 64 MiB: .*above the model" || fail "none below: $got"
# The machine moved during the bench (--bench-log): after the counts, the node figure that moved
# most, the other nodes that moved by a quarter or more, the latency; one fewer line below. Under a
# quarter, or no such lines: nothing more.
cat >"$work/bench.log" <<'TXT'
# machine: host1 between the start and the end of the run: copy_in moved up to 89% (at 1.0 MiB a rank, 22.7 GB/s at its faster moment), copy 50% (at 16.0 MiB a rank, 35.8 GB/s): its verdicts allow for it (docs/verdicts.md, "Stable inputs")
# machine: host2 between the start and the end of the run: intra moved up to 30% (at 16.0 KiB a rank, 2.98 GB/s at its faster moment): its verdicts allow for it (docs/verdicts.md, "Stable inputs")
# machine: host3 between the start and the end of the run: copy moved up to 4.2% (at 16.0 KiB a rank, 66.1 GB/s at its faster moment): its verdicts allow for it (docs/verdicts.md, "Stable inputs")
# machine: the latency per message between the start and the end of the run: moved 56% (0.13 us at its faster moment): its verdicts allow for it (docs/verdicts.md, "Stable inputs")
TXT
got=$(python3 "$dir/suite-verdicts.py" "$work/report.txt" 2 --bench-log "$work/bench.log") || fail "exit $?"
[ "$(printf '%s\n' "$got" | sed -n 2p)" = "  The machine moved during the bench (allowed for): host1's copy_in up to 89% at 1.0 MiB a rank (and 1 other node's figures); latency 56%" ] ||
  fail "moved: got
$got"
[ "$(printf '%s\n' "$got" | wc -l)" -eq 3 ] || fail "moved, MAX 2: 3 lines wanted: $got"
grep -v -e host1 -e latency "$work/bench.log" >"$work/little.log"
got=$(python3 "$dir/suite-verdicts.py" "$work/report.txt" 2 --bench-log "$work/little.log") || fail "exit $?"
[ "$(printf '%s\n' "$got" | sed -n 2p)" = "  The machine moved during the bench (allowed for): host2's intra up to 30% at 16.0 KiB a rank" ] ||
  fail "one node moved: got
$got"
grep -v -e host1 -e host2 -e latency "$work/bench.log" >"$work/still.log"
got=$(python3 "$dir/suite-verdicts.py" "$work/report.txt" 2 --bench-log "$work/still.log") || fail "exit $?"
[ "$(printf '%s\n' "$got" | wc -l)" -eq 3 ] && ! printf '%s\n' "$got" | grep -q "machine moved" || fail "under a quarter: $got"
# A report without verdicts (no machine model): nothing.
printf 'commscope bench report\nFastest measured: ring.\n' >"$work/none.txt"
got=$(python3 "$dir/suite-verdicts.py" "$work/none.txt") || fail "exit $?"
[ -z "$got" ] || fail "no verdicts: printed '$got'"
echo "suite-verdicts.sh: ok"
