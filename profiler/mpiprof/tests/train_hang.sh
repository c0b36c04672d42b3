#!/usr/bin/env bash
# A hang of commscope-train found by the flight recorder: the trainer (tiny model, many steps) runs
# at 2 ranks, under libcommscope-mpiprof.so (LIB) or with its own recorder (LIB "-": no library;
# the trainer's --profile puts the record beside it); rank 1 is stopped (SIGSTOP) mid-run, then
# SIGUSR1 goes to every rank through mpirun (Open MPI forwards it). Rank 0 writes its record from
# inside the gradients' allreduce; the stopped rank writes none. commscope-report hang must name
# rank 1 and its host, the allreduce and the communicator rank 0 waits in (the library's label of
# the trainer's world, mpi[0,1]; the trainer's own, dp[0,1] as its profile says, or the profile's
# gather of a step on profiler[0,1], where rank 0 waits when rank 1 stopped after its allreduces).
#   train_hang.sh WORKDIR TRAIN LIB REPORT DATA -- MPIEXEC [FLAGS...]
set -u
work=$1 train=$2 lib=$3 report=$4 data=$5
shift 5
[ "$1" = "--" ] && shift
me=train_hang.sh
. "$(dirname "${BASH_SOURCE[0]}")/records.sh"  # wait_for_records, hang_verdict, watch_job, find_rank1
fail() { echo "$me: FAIL: $*"; exit 1; }
if [ "$lib" = - ]; then
  dir=$work/train-hang-own
  how=(--profile "$dir/t.h5")
  call='(allreduce #[0-9]+ on dp\[0,1\]|profile\.append #[0-9]+ on profiler\[0,1\])'
else
  dir=$work/train-hang
  how=(-x LD_PRELOAD="$lib" -x COMMSCOPE_PROFILE_OUT="$dir/t.h5")
  call='allreduce #[0-9]+ on mpi\[0,1\]'
fi
rm -rf "$dir" && mkdir -p "$dir" || exit 1
export OMP_NUM_THREADS=1
if [ "$lib" = - ]; then
  "$@" -np 2 "$train" --model tiny --steps 1000000 --batch 4 --threads 1 --val-every 0 --log-every 1000000 \
    --data "$data" "${how[@]}" >"$dir/run.log" 2>&1 &
else
  "$@" -np 2 "${how[@]}" "$train" --model tiny --steps 1000000 --batch 4 --threads 1 --val-every 0 \
    --log-every 1000000 --data "$data" >"$dir/run.log" 2>&1 &
fi
watch_job $!
find_rank1 'grep -q "^step" "$dir/run.log" 2>/dev/null'  # and training has begun
sleep 0.5
kill -STOP "$rank1"
sleep 1  # rank 0 reaches the next allreduce and waits in it
kill -USR1 $job
wait_for_records "$dir/t.flight" 1 5  # rank 0's: the stopped rank writes none
[ -f "$dir/t.flight/rank00000.flight" ] || fail "rank 0 wrote no flight record at SIGUSR1 (log: $dir/run.log)"
[ -f "$dir/t.flight/rank00001.flight" ] && fail "the stopped rank wrote a record"
hang_verdict "$report" "$dir/t.flight"
grep -Eq "^Verdict: rank 1 \([^)]+\) never called $call; it wrote no flight record \(dead, stopped or unreachable\); rank 0 waits in (allreduce|profile\.append) #[0-9]+" <<<"$line" ||
  fail "the verdict does not name rank 1, its host, and rank 0's allreduce"
echo "$me: ok"
