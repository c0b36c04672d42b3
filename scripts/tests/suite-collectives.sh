#!/usr/bin/env bash
# The suite summary's collectives (scripts/suite-collectives.py) on fixed report CSV files: the
# fastest by its median call at the smallest size and by busbw at its median call at the largest,
# each with the next; a stalled mean (one preempted call) does not decide it, and a fit does not
# either (the fits.csv below has hier's negative-latency regime and rhd's line alone holding for
# broadcast, which the old summary printed as "latency hier (-491.7 us) bandwidth hier"); the count
# of fits that held, naming a collective where only one algorithm's did.
set -u
dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "suite-collectives.sh: FAIL: $*"; exit 1; }
cat >"$work/allreduce.csv" <<'CSV'
size_bytes,ring_us,ring_busbw,ring_fitted_us,shm_us,shm_busbw,shm_fitted_us,rhd_us,rhd_busbw,rhd_fitted_us
8,1.7,0.0047,1.65,4000,2e-06,0.40,2.5,0.0031,1.8
67108864,20000,3.36,20000,13000,5.16,12900,15000,4.47,14800
CSV
cat >"$work/broadcast.csv" <<'CSV'
size_bytes,hier_us,hier_busbw,hier_fitted_us,rhd_us,rhd_busbw,rhd_fitted_us
8,0.30,0.0267,0.28,0.9,0.0089,0.85
131072,60,2.18,55,45,2.91,44
CSV
cat >"$work/fits.csv" <<'CSV'
collective,algorithm,regime,from_bytes,to_bytes,sizes,alpha_us,bandwidth_GBps,R2,max_rel_error,fit
allreduce,ring,1,8,67108864,9,1.6,3.4,0.99,0.1,fits
allreduce,shm,1,8,67108864,9,0.4,5.2,0.98,0.1,fits
allreduce,rhd,1,8,67108864,9,-,-,0.5,0.9,does not fit
broadcast,hier,1,8,8192,6,-,-,0.4,2.1,does not fit
broadcast,hier,2,16384,131072,4,0,53.25,0.95,0.2,fits
broadcast,rhd,1,8,131072,9,0.8,3,0.97,0.1,fits
CSV
printf 'x\n' >"$work/machine.csv"
got=$(python3 "$dir/suite-collectives.py" "$work") || fail "exit $?"
want="  allreduce      8 B: shm 0.4 us (next ring 1.65)   64 MiB: shm 5.2 GB/s busbw (next rhd 4.53)
  broadcast      8 B: hier 0.28 us (next rhd 0.85)   128 KiB: rhd 2.976 GB/s busbw (next hier 2.378)
  alpha-beta fits held at every size for 3 of 5 collective and algorithm pairs; only one algorithm's held for broadcast (rhd's)"
[ "$got" = "$want" ] || fail "got
$got
wanted
$want"
echo "suite-collectives.sh: ok"
