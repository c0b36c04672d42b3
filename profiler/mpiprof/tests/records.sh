# Sourced by the hang tests. wait_for_records DIR COUNT SECONDS [PID] returns 0 once DIR holds
# COUNT flight records (rankNNNNN.flight), 1 when SECONDS pass first or process PID has ended.
wait_for_records() {
  local dir=$1 count=$2 tenths=$(($3 * 10)) pid=${4:-}
  for _ in $(seq 1 "$tenths"); do
    [ "$(ls "$dir" 2>/dev/null | grep -c '\.flight$')" -ge "$count" ] && return 0
    [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null && return 1
    sleep 0.1
  done
  return 1
}

# hang_verdict REPORT DIR [ARGS...]: `REPORT hang DIR ARGS` (commscope-report) into $out, failing
# the test (the caller's fail) where it exits non-zero; its verdict line into $line, printed after
# "$me: ".
hang_verdict() {
  local report=$1
  shift
  out=$("$report" hang "$@" 2>&1) || fail "commscope-report hang exited $?: $out"
  line=$(grep '^Verdict: ' <<<"$out")
  echo "$me: $line"
}

# A job of commscope's tools whose rank 1 the test stops. watch_job JOB: the launcher's pid ($job),
# whose children are the ranks (on one node Open MPI's mpirun starts them itself; found by their
# parent, not by their command line, which another test's job running beside this one may share);
# on exit (trap) rank 1 is let go and the job and its ranks ended (a launcher killed with SIGKILL
# leaves its children running).
# find_rank1 READY: waits up to 10 s for rank 1's process (the one whose environment says
# OMPI_COMM_WORLD_RANK=1) into $rank1, and for READY (a command) to succeed; fails the test (the
# caller's fail) when the job ends first or none is found.
watch_job() {
  job=$1 ranks="" rank1=""
  trap 'stop_job' EXIT
}
stop_job() {
  [ -n "${rank1:-}" ] && kill -CONT "$rank1" 2>/dev/null
  kill -TERM "$job" 2>/dev/null
  sleep 1
  kill -KILL "$job" $ranks 2>/dev/null
  wait "$job" 2>/dev/null
}
find_rank1() {
  local ready=$1 p
  for _ in $(seq 1 100); do
    ranks=$(pgrep -P "$job" | tr '\n' ' ')
    for p in $ranks; do
      tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=1" && rank1=$p
    done
    [ -n "$rank1" ] && eval "$ready" && return 0
    kill -0 "$job" 2>/dev/null || fail "the job ended (log: $dir/run.log)"
    sleep 0.1
  done
  fail "no rank 1 found (not Open MPI?)"
}
