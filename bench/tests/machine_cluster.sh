#!/usr/bin/env bash
# The machine model across emulated hosts (label cluster): 2 hosts x 2 ranks of a cluster of its
# own, host2's link shaped to 100mbit while --link-rate says 1gbit for every host; the doctor's
# pairs first, then the bench with --doctor. The header (printed and /meta machine_model) records
# the user's rate (0.125 GB/s, source user) and the doctor's measured one (below 100 Mbit/s,
# 0.0125 GB/s, with some room, and above a tenth of it; source doctor) for both hosts, and the
# detected veth rate is gone under the user's; the latency is the doctor's (the bench's own where
# the doctor's ranks outnumbered their CPUs, saying so), and without --doctor the start-up's 8 B
# ping-pong over 3 pairs. Exit 77 where no cluster can be made here.
#   machine_cluster.sh PREFIX WORKDIR BENCH DOCTOR
set -uo pipefail
prefix=$1 work=$2 bench=$3 doctor=$4
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$root/scripts/tests/own-cluster.sh"  # own_cluster, $emulate
me=machine_cluster.sh
fail() { echo "$me: FAIL: $*"; exit 1; }
own_cluster "$prefix" 2 --slots 2 --link 1gbit --host-link host2=100mbit
run() { "$emulate" mpirun --prefix "$prefix" -np 4 --map-by ppr:2:node "$@"; }
d=$work/machine-cluster-doctor.h5 b=$work/machine-cluster-bench.h5
rm -f "$d" "$b"
run "$doctor" --no-probes --no-nodes --passes 2 --bytes 256K --bw-iters 2 --lat-iters 20 -o "$d" >"$work/machine-cluster-doctor.log" 2>&1 ||
  fail "the doctor exited $? (log: $work/machine-cluster-doctor.log)"
out=$(run "$bench" allreduce --algo ring -b 1K -e 1K -n 2 -w 1 --doctor "$d" --link-rate '*=1gbit' --out "$b" 2>&1) ||
  fail "the bench exited $?: $out"
printf '%s\n' "$out" | grep '^# machine:'
for h in host1 host2; do
  line=$(printf '%s\n' "$out" | grep "^# machine: $h: 2 ranks,") || fail "no '# machine: $h: 2 ranks' line"
  grep -q "; nic 0.125 GB/s (user: --link-rate \*=1gbit);" <<<"$line" || fail "$h: not the user's 1gbit"
  measured=$(sed -n 's/.*; nic measured \([0-9.e-]*\) GB\/s (doctor: .*/\1/p' <<<"$line")
  [ -n "$measured" ] || fail "$h: no doctor's measured rate"
  awk -v m="$measured" 'BEGIN { exit !(m > 0.00125 && m < 0.0125 * 1.05) }' ||
    fail "$h: the doctor measured $measured GB/s, not what a 100mbit link gives"
  echo "machine_cluster.sh: $h: nic 0.125 GB/s (user), measured $measured GB/s (doctor): ok"
done
# The doctor's latency, but not where its ranks outnumbered their CPUs (this 4-rank run on fewer than
# 4 cores): its round trips waited for the scheduler there; the bench measures its own and says so.
over=$(h5dump -a /meta/oversubscribed "$d" 2>/dev/null | sed -n 's/^ *(0): "\(.*\)"$/\1/p')
if [ -z "$over" ]; then
  printf '%s\n' "$out" | grep -q "^# machine: latency per message .* (doctor: machine-cluster-doctor.h5: 8 B half round trip, the largest of 2 pairs between hosts " ||
    fail "no latency from the doctor's pairs"
else
  printf '%s\n' "$out" | grep -qF "# machine: WARNING: --doctor machine-cluster-doctor.h5's latency is not taken: its ranks outnumbered their CPUs ($over), where a round trip waits for the scheduler" ||
    fail "the doctor's ranks outnumbered their CPUs ($over), and the bench does not say that it leaves its latency"
  printf '%s\n' "$out" | grep -q "^# machine: latency per message .* (measured: 8 B ping-pong, " ||
    fail "the doctor's latency left, but none measured"
fi
# Without --doctor the start-up measures it: rank 0 with host2's first rank, and inside each host.
out2=$(run "$bench" allreduce --algo ring -b 1K -e 1K -n 2 -w 1 --link-rate '*=1gbit' --out "$work/machine-cluster-probe.h5" 2>&1) ||
  fail "the bench without --doctor exited $?: $out2"
printf '%s\n' "$out2" | grep '^# machine: latency'
printf '%s\n' "$out2" | grep -q "^# machine: latency per message .* (measured: 8 B ping-pong, the fastest of 10 passes of up to 20 round trips, the largest of 3 pairs " ||
  fail "no latency measured over the 3 pairs"
[ "$(printf '%s\n' "$out2" | grep -c 'intra [0-9.e+-]* GB/s (measured: ring exchange among its 2 ranks at once')" = 2 ] || fail "not both hosts' intra rates measured"
attr=$(h5dump -a /meta/machine_model "$b" 2>&1) || fail "no /meta machine_model in $b"
[ "$(grep -o 'nic_measured.source=doctor' <<<"$attr" | wc -l)" = 2 ] || fail "the file's model lacks the doctor's figures"
[ "$(grep -o 'nic.source=user' <<<"$attr" | wc -l)" = 2 ] || fail "the file's model lacks the user's rates"
echo "machine_cluster.sh: ok"
