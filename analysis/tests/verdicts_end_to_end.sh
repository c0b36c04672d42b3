#!/usr/bin/env bash
# The verdicts end to end, known answers to the printed digit: synthetic_verdicts writes bench
# files whose header records a machine model (as the bench writes /meta machine_model, with the
# doctor's measured links as --doctor records them), commscope-report bench -o reads them back;
# every Verdict line and CSV cell below is worked out by hand from docs/verdicts.md.
#   verdicts_end_to_end.sh SYNTHETIC_VERDICTS REPORT WORKDIR
#
# cluster.h5: 4 ranks, host1:2 host2:2 (ranks 0,1 on host1), copy 10 GB/s (1e4 B/us), host1's
# link 0.125 GB/s (system), host2's 0.1 GB/s (given: --link-rate host2=800mbit), the doctor's
# links host1 0.116, host2 0.012 GB/s; n = 64 MiB = 67108864 B; busbw = 1.5 S / t (4 ranks).
# alpha: no latency in the header, so the run's own: the smallest time per message at 8 B, less
#   what the rates price of it (below), ring (300 - 0.1206) us / 6 messages = 49.98 us, rhd
#   (400 - 0.0822) / 4 = 99.98 us: 49.98 us, "50 us" (allreduce ring at 8 B).
# ring, 8 B: 6 a + 1.5 S / 100 + 0.75 S / 1e4 (each step crosses host2's link, the slowest,
#   whole) = 299.8794 + 0.12 + 0.0006 = 300 us; of_expected 300 / 300 = 1;
#   expected_busbw 12 / 300e3 = 4e-05; 6 a = 299.88 of 300 us: latency-bound.
# ring, 64 MiB: 6 a + 1.5 n / 100 + 0.75 n / 1e4 = 299.88 + 1006632.96 + 5033.1648 = 1011966.0 us;
#   expected_busbw 1.5 n / that = 0.099473 -> 0.09947 (line: 0.0995); measured 1.5 n / 88 =
#   1143901.09 us; of_expected 1011966.0 / 1143901.09 = 0.88466 -> 0.885, 88%: good.
# rhd, 8 B (Rabenseifner's allreduce: the halves to the nearest rank first): step 1 (distance 1)
#   S/2 inside a node (copy / 2 = 5), step 2 (distance 2) S/4 from both ranks of a host through
#   host2's link at once (0.1 / 2 = 0.05 each):
#   B_eff S = 1.5 S x (0.5 / 5 + 0.25 / 0.05) / 0.75 / 1e3 = 1.5 S x 0.0068 us/B, so
#   4 a + 0.0816 + 0.0006 = 199.9196 + 0.0822 = 200.0018 us; of_expected 200.0018 / 400 = 0.5
#   -> 0.5, 50%: below; expected_busbw 12 / 200.0018e3 = 5.99995e-05 -> 6e-05.
# rhd, 64 MiB: 4 a + 1.5 n x 0.0068 + 5033.1648 = 199.92 + 684510.4128 + 5033.1648 = 689743.50 us;
#   expected_busbw 0.145943 -> 0.1459 (line: 0.146); measured 1.5 n / 7.5 = 13421772.8 us;
#   of_expected 0.051391 -> 0.0514, 5.1%: far below; the doctor's host2 0.012 < 0.7 x 0.116: named.
# hier, 64 MiB (2 nodes x 2): the node level at the copy rate (shm's reducescatter n B + n/2 G and
#   allgather 3/2 n B), the level between nodes at host2's link, the slowest, shared by the node's
#   2 cross groups: 2 a + 3 n / 1e4 + n / 100 + 0.25 n / 1e4 = 99.96 + 20132.6592 + 671088.64 +
#   1677.7216 = 692998.98 us; expected_busbw 0.14526 -> 0.1453 (line: 0.145); measured
#   1.5 n / 130 = 774333.05 us; of_expected 0.89496 -> 0.895, 89%: good.
# nonic.h5: the same rows, host2's link without a rate: nothing judged, what is missing said.
# curve.h5 (docs/verdicts.md, "The rate of a size"): 2 ranks of one node, latency 1 us, the copy
#   rate's curve 40 GB/s at 16 KiB, 30 at 256 KiB, 10 at 4 MiB, 8 at 128 MiB, no rate between the
#   ranks (half the copy rate at the row's working set). A ring allreduce of n on 2 ranks:
#   2 a + n / (copy(2n) / 2) + n/2 / copy(2n), at a rank's working set of 2n (its two buffers):
#   4 KiB: 8 KiB, below the first point: 40; 2 + 4096 / 20e3 + 2048 / 40e3 = 2.256 us;
#     expected_busbw 4096 / 2.256 = 1.816; measured 2.5 us: of_expected 0.9024 -> 0.902, 90%;
#     2 a = 2 of 2.256 us: latency-bound, good.
#   1 MiB: 2 MiB, 3/4 of the way in log2 from 256 KiB to 4 MiB: 30 - 0.75 x 20 = 15;
#     2 + 1048576 / 7.5e3 + 524288 / 15e3 = 2 + 139.8101 + 34.9525 = 176.7627 us;
#     expected_busbw 5.932; measured busbw 5 (209.7152 us): of_expected 0.84287 -> 0.843.
#   64 MiB: 128 MiB, the last point: 8; 2 + n / 4e3 + n/2 / 8e3 = 2 + 16777.216 + 4194.304 =
#     20973.52 us; expected_busbw 3.19967 -> 3.2; measured busbw 3 (22369.62 us): of_expected
#     0.93759 -> 0.938; with 1 MiB one range, judged by its typical row (64 MiB): 94%: good.
set -uo pipefail
synthetic=$1 report=$2 work=$3
me=verdicts_end_to_end.sh
fail() { echo "$me: FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work" || fail "cannot make $work"
"$synthetic" "$work" >/dev/null || fail "synthetic_verdicts exited $?"
status=0
# The report's lines starting "Verdict: " must be exactly these, in this order.
verdicts() {
  local name=$1
  shift
  local got want
  got=$(grep '^Verdict: ' "$work/$name/report.md")
  want=$(printf '%s\n' "$@")
  if [ "$got" != "$want" ]; then
    echo "$me: FAIL: $name's Verdict lines differ:"
    diff <(printf '%s\n' "$want") <(printf '%s\n' "$got")
    status=1
  fi
}
# The allreduce CSV (CRLF lines) must be exactly these lines.
csv() {
  local name=$1
  shift
  local got
  got=$(tr -d '\r' <"$work/$name/allreduce.csv")
  if [ "$got" != "$(printf '%s\n' "$@")" ]; then
    echo "$me: FAIL: $name's allreduce.csv differs:"
    diff <(printf '%s\n' "$@") <(printf '%s\n' "$got")
    status=1
  fi
}
for name in cluster nonic curve; do
  "$report" bench "$work/$name.h5" -o "$work/$name" >"$work/$name.log" 2>&1 || fail "the report on $name.h5 exited $?"
done

grep -q 'Latency per message: the run.s own smallest time per message, 50 us (allreduce ring at 8 B;' \
  "$work/cluster/report.md" || { echo "$me: FAIL: not the run's own 50 us per message"; status=1; }
csv cluster \
  "size_bytes,ring_us,ring_busbw,ring_fitted_us,ring_expected_busbw,ring_of_expected,rhd_us,rhd_busbw,rhd_fitted_us,rhd_expected_busbw,rhd_of_expected,hier_us,hier_busbw,hier_fitted_us,hier_expected_busbw,hier_of_expected" \
  "8,300,4e-05,300,4e-05,1,400,3e-05,400,6e-05,0.5,-,-,-,-,-" \
  "67108864,1143901,0.088,1143901,0.09947,0.885,13421773,0.0075,13421773,0.1459,0.0514,774333,0.13,774333,0.1453,0.895"
# rhd's latency-bound 8 B line is checked up to its verdict only: what follows names the doctor's
# slowest link, a bandwidth figure, for a size whose time is latency (see docs/verdicts.md).
rhd8=$(grep '^Verdict: allreduce rhd at 8 B: ' "$work/cluster/report.md")
[[ $rhd8 == "Verdict: allreduce rhd at 8 B: latency-bound, 400 us = 50% of the speed of the expected 200 us (latency 200 us): below"* ]] ||
  { echo "$me: FAIL: rhd at 8 B: $rhd8"; status=1; }
verdicts cluster \
  "Verdict: allreduce ring at 8 B: latency-bound, 300 us = 100% of the speed of the expected 300 us (latency 300 us): good." \
  "Verdict: allreduce ring at 64 MiB: busbw 0.088 GB/s = 88% of the 0.0995 GB/s that host2's link (0.1 GB/s, given: --link-rate host2=800mbit) allows: good." \
  "$rhd8" \
  "Verdict: allreduce rhd at 64 MiB: busbw 0.0075 GB/s = 5.1% of the 0.146 GB/s that host2's link (0.1 GB/s, given: --link-rate host2=800mbit; 2 flows at once) allows: far below; host2's link measured 0.012 GB/s (doctor), the others 0.116." \
  "Verdict: allreduce hier at 64 MiB: busbw 0.13 GB/s = 89% of the 0.145 GB/s that host2's link (0.1 GB/s, given: --link-rate host2=800mbit; 2 flows at once) allows: good."

csv nonic \
  "size_bytes,ring_us,ring_busbw,ring_fitted_us,ring_expected_busbw,ring_of_expected,rhd_us,rhd_busbw,rhd_fitted_us,rhd_expected_busbw,rhd_of_expected,hier_us,hier_busbw,hier_fitted_us,hier_expected_busbw,hier_of_expected" \
  "8,300,4e-05,300,-,-,400,3e-05,400,-,-,-,-,-,-,-" \
  "67108864,1143901,0.088,1143901,-,-,13421773,0.0075,13421773,-,-,774333,0.13,774333,-,-"
verdicts nonic \
  "Verdict: allreduce ring: not judged, the model lacks host2's link rate (its NIC reports none: --link-rate host2=RATE)." \
  "Verdict: allreduce rhd: not judged, the model lacks host2's link rate (its NIC reports none: --link-rate host2=RATE)." \
  "Verdict: allreduce hier: not judged, the model lacks host2's link rate (its NIC reports none: --link-rate host2=RATE)."
csv curve \
  "size_bytes,ring_us,ring_busbw,ring_fitted_us,ring_expected_busbw,ring_of_expected" \
  "4096,2.5,1.638,2.5,1.816,0.902" \
  "1048576,209.7,5,209.7,5.932,0.843" \
  "67108864,22370,3,22370,3.2,0.938"
verdicts curve \
  "Verdict: allreduce ring at 4 KiB: latency-bound, 2.5 us = 90% of the speed of the expected 2.26 us (latency 2 us): good." \
  "Verdict: allreduce ring from 1 MiB: busbw 3 GB/s = 94% of the 3.2 GB/s that the link between host1's ranks (4 GB/s, measured: memcpy 128 MiB, best of 4; at 128.0 MiB a rank, its buffers, on its curve (16.0 KiB to 128.0 MiB), halved: copied in and out of shared memory) allows [2 sizes: median 89%, 84% to 94%]: good."
[ $status = 0 ] && echo "$me: ok (cluster.h5: 5 verdicts and 2 CSV rows, nonic.h5: 3 not judged, curve.h5: 2 verdicts and 3 CSV rows)"
exit $status
