#!/usr/bin/env bash
# A hang of commscope-bench found by its own flight recorder (profiler/flight_watch.hpp), with no
# library: first a healthy run, which must write no record; then a long run of 8-byte allreduces
# whose rank 1 is stopped (SIGSTOP) mid-run: rank 0's -T watchdog ends the run after writing its
# record ("timeout"). commscope-report hang must name rank 1 and its host, and the allreduce and the
# communicator (the bench's world) rank 0 waits in.
#   bench_hang.sh WORKDIR BENCH REPORT -- MPIEXEC [FLAGS...]
set -u
work=$1 bench=$2 report=$3
shift 3
[ "$1" = "--" ] && shift
me=bench_hang.sh
. "$(dirname "${BASH_SOURCE[0]}")/records.sh"  # wait_for_records, hang_verdict, watch_job, find_rank1
fail() { echo "$me: FAIL: $*"; exit 1; }
dir=$work/bench-hang
rm -rf "$dir" && mkdir -p "$dir" || exit 1
"$@" -np 2 -x COMMSCOPE_FLIGHT_DIR="$dir/healthy" "$bench" allreduce -b 8 -e 8 -n 10 -w 1 -T 10 >"$dir/healthy.log" 2>&1 ||
  fail "the healthy run failed (log: $dir/healthy.log)"
[ -e "$dir/healthy" ] && fail "a healthy run wrote flight records ($dir/healthy)"
"$@" -np 2 -x COMMSCOPE_FLIGHT_DIR="$dir/flight" "$bench" allreduce -b 8 -e 8 -n 100000000 -w 1 -c 0 -T 1 \
  >"$dir/run.log" 2>&1 &
watch_job $!
find_rank1 true
sleep 1  # into the timed allreduces
kill -STOP "$rank1"
wait_for_records "$dir/flight" 1 20 || fail "rank 0 wrote no flight record at its -T watchdog (log: $dir/run.log)"
# As the launcher does when it ends the job (SIGCONT, then SIGTERM): the stopped rank, let go after
# longer than -T without a call of its own, must not report a timeout of its own.
kill -CONT "$rank1"
sleep 1.5
[ -f "$dir/flight/rank00001.flight" ] && fail "the stopped rank wrote a record once let go: $(grep reason "$dir/flight/rank00001.flight")"
grep -qx "reason timeout" "$dir/flight/rank00000.flight" || fail "rank 0's record is not its watchdog's"
hang_verdict "$report" "$dir/flight"
grep -Eq "^Verdict: rank 1 \([^)]+\) never called allreduce #[0-9]+ on world; it wrote no flight record \(dead, stopped or unreachable\); rank 0 waits in allreduce #[0-9]+" <<<"$line" ||
  fail "the verdict does not name rank 1, its host, and rank 0's allreduce on world"
echo "$me: ok"
