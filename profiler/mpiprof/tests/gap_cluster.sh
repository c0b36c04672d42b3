#!/usr/bin/env bash
# The in-training gap across emulated hosts (label cluster): 3 hosts x 1 rank, every link 1gbit but
# host2's at 100mbit (--host-link host2=100mbit), the doctor's pairs first, then tests/mpi_gap.c
# 'none' (1 MiB allreduces after 5 ms of compute, 6 steps) under the PMPI library, its calls alone
# (commscope-bench --from-profile with --doctor and --link-rate '*=1gbit', as the suite runs it),
# and commscope-report profile --bench: the calls alone are far below what the machine allows and
# the verdict names host2 (the network), while the step adds little to them (in_step/alone
# 0.8-1.25: a call of ~0.1 s over the slow link, against which the ranks' skew is small). With
# --link-rate host2=100mbit, the link's true rate, the report prices the calls with it: the same
# calls alone are no longer far below what the machine allows. And without a bench: a replay of the
# step (--gaps none) priced by the report's own --doctor, --link-rate '*=1gbit' and a machine file
# with the copy rate (which a bench measures, and the reduction's model needs) names host2 too.
# Exit 77 where no cluster can be made here.
#   gap_cluster.sh PREFIX WORKDIR BINDIR LIB APP
set -uo pipefail
prefix=$1 work=$2 bin=$3 lib=$4 app=$5
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
. "$root/scripts/tests/own-cluster.sh"  # own_cluster, $emulate
me=gap_cluster.sh
fail() { echo "$me: FAIL: $*"; exit 1; }
own_cluster "$prefix" 3 --slots 1 --link 1gbit --host-link host2=100mbit
run() { "$emulate" mpirun --prefix "$prefix" -np 3 --map-by ppr:1:node "$@"; }
dir=$work/gap-cluster
rm -rf "$dir" && mkdir -p "$dir" || exit 1
run "$bin/commscope-doctor" --no-probes --no-nodes --passes 2 --bytes 256K --bw-iters 2 --lat-iters 20 -o "$dir/doctor.h5" \
  >"$dir/doctor.log" 2>&1 || fail "the doctor exited $? (log: $dir/doctor.log)"
run -x LD_PRELOAD="$lib" -x COMMSCOPE_PROFILE_OUT="$dir/p.h5" "$app" none 6 1048576 >"$dir/run.log" 2>&1 ||
  fail "the program exited $? (log: $dir/run.log)"
run "$bin/commscope-bench" --from-profile "$dir/p.h5" -n 4 -w 1 --doctor "$dir/doctor.h5" --link-rate '*=1gbit' \
  --out "$dir/alone.h5" >"$dir/bench.log" 2>&1 || fail "the bench exited $? (log: $dir/bench.log)"
"$bin/commscope-report" profile "$dir/p.h5" --bench "$dir/alone.h5" -o "$dir/report" >"$dir/report.log" 2>&1 ||
  fail "the report exited $?: $(tail -1 "$dir/report.log")"
grep "^The step's communication" "$dir/report.log" | sed "s/^/$me: /"
line=$(grep "^Verdict: world: allreduce mpi at 1 MiB" "$dir/report.log" | head -1)
echo "$me: $line"
[[ $line == *": far below;"* ]] || fail "the calls alone are not far below what the machine allows"
[[ ${line#*far below;} == *host2* ]] || fail "the verdict does not name host2"
python3 - "$dir/report/step_communication.csv" <<'PY' || fail "in the step against alone: above"
import csv, sys
row = next(r for r in csv.DictReader(open(sys.argv[1])) if r["group"] == "world" and r["call"] == "allreduce")
ratio = float(row["in_step_over_alone"])
print("gap_cluster.sh: allreduce 1 MiB on world: alone %s ms, in the step %s (wait %s), x%s of alone, %s of expected" %
      (row["alone_ms"], row["in_step_ms"], row["wait_ms"], row["in_step_over_alone"], row["alone_of_expected"]))
sys.exit(0 if 0.8 <= ratio <= 1.25 else 1)
PY
# The true rate of host2's link given to the report: the bench file's model completed by it.
"$bin/commscope-report" profile "$dir/p.h5" --bench "$dir/alone.h5" --link-rate host2=100mbit -o "$dir/report-rate" \
  >"$dir/report-rate.log" 2>&1 || fail "the report with --link-rate exited $?: $(tail -1 "$dir/report-rate.log")"
grep -q "completed by --link-rate host2=100mbit" "$dir/report-rate.log" || fail "the model note names no --link-rate"
python3 - "$dir/report/step_communication.csv" "$dir/report-rate/step_communication.csv" <<'PY' ||
import csv, sys
rows = [next(r for r in csv.DictReader(open(f)) if r["group"] == "world" and r["call"] == "allreduce") for f in sys.argv[1:]]
before, after = (float(r["alone_of_expected"]) for r in rows)
print("gap_cluster.sh: --link-rate host2=100mbit: expected %s ms (was %s), alone of expected %.3g (was %.3g)" %
      (rows[1]["expected_ms"], rows[0]["expected_ms"], after, before))
sys.exit(0 if after >= 0.4 and after > 3 * before else 1)
PY
  fail "with host2's true link rate the calls alone are still far below"
run "$bin/commscope-replay" "$dir/p.h5" --gaps none -o "$dir/replay.h5" >"$dir/replay.log" 2>&1 ||
  fail "commscope-replay --gaps none exited $? (log: $dir/replay.log)"
printf 'node host=* copy=10GB/s\n' >"$dir/copy.txt"
"$bin/commscope-report" profile "$dir/p.h5" --alone "$dir/replay.h5" --doctor "$dir/doctor.h5" --machine "$dir/copy.txt" \
  --link-rate '*=1gbit' -o "$dir/report-doctor" >"$dir/report-doctor.log" 2>&1 ||
  fail "the report with --alone --doctor exited $?: $(tail -1 "$dir/report-doctor.log")"
line=$(grep "^Verdict: world: allreduce mpi at 1 MiB" "$dir/report-doctor.log" | head -1)
echo "$me: --alone, --doctor: $line"
[[ $line == *": far below;"* && ${line#*far below;} == *"host2's link measured"*"(doctor)"* ]] ||
  fail "priced by the report's --doctor, the replay's calls are not far below naming host2's measured link"
echo "$me: ok"
