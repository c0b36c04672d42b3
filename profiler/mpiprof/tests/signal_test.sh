#!/usr/bin/env bash
# Profiles written at a signal: tests/mpi_app.c runs until killed at 2 ranks under the preloaded
# library; once it has done 3 iterations, mpirun gets the signal (and forwards it to the ranks).
# SIGTERM: each rank must leave DIR/run.signal.rankNNNNN.h5, a one-rank profile that
# test_mpiprof_check --signal and commscope-report read, and no main profile. SIGUSR1: each rank
# writes its flight record (DIR/run.flight/rankNNNNN.flight) and the job goes on. With COMMSCOPE_SIGNALS=0 nothing is
# written; a bad COMMSCOPE_SIGNALS is said in one line.
#   signal_test.sh DIR MPIEXEC "MPIEXEC_FLAGS" LIBRARY APP CHECK REPORT
set -u
dir=$1 mpiexec=$2 flags=$3 lib=$4 app=$5 check=$6 report=$7
fail() {
  echo "FAIL: $*"
  exit 1
}

# run SIGNAL [ENV=VALUE]: the app until 3 iterations are done, then SIGNAL to mpirun.
run() {
  local sig=$1 extra=${2:-COMMSCOPE_SIGNALS=1}
  rm -rf "$dir" && mkdir -p "$dir" || fail "cannot make $dir"
  # shellcheck disable=SC2086
  "$mpiexec" -np 2 $flags -x "$extra" -x COMMSCOPE_PROFILE_OUT="$dir/run.h5" -x LD_PRELOAD="$lib" "$app" 0 \
    "$dir/ready" >"$dir/log" 2>&1 &
  local pid=$! i
  for i in $(seq 300); do
    [ -e "$dir/ready" ] && break
    sleep 0.05
  done
  [ -e "$dir/ready" ] || {
    kill -KILL "$pid"
    cat "$dir/log"
    fail "the app did not start within 15 s"
  }
  kill -"$sig" "$pid"
  wait "$pid"
  echo "mpirun after SIG$sig: exit $?"
  cat "$dir/log"
}

# SIGUSR1: the flight records, and the job goes on until SIGTERM.
rm -rf "$dir" && mkdir -p "$dir" || fail "cannot make $dir"
# shellcheck disable=SC2086
"$mpiexec" -np 2 $flags -x COMMSCOPE_PROFILE_OUT="$dir/run.h5" -x LD_PRELOAD="$lib" "$app" 0 "$dir/ready" \
  >"$dir/log" 2>&1 &
pid=$!
for _ in $(seq 300); do
  [ -e "$dir/ready" ] && break
  sleep 0.05
done
kill -USR1 "$pid"
for _ in $(seq 200); do
  [ -e "$dir/run.flight/rank00000.flight" ] && [ -e "$dir/run.flight/rank00001.flight" ] && break
  sleep 0.05
done
sleep 0.5
alive=0
kill -0 "$pid" 2>/dev/null && alive=1
kill -TERM "$pid"
wait "$pid"
for r in 0 1; do
  [ -e "$dir/run.flight/rank0000$r.flight" ] || { cat "$dir/log"; fail "SIGUSR1: rank $r wrote no flight record"; }
done
[ $alive = 1 ] || { cat "$dir/log"; fail "SIGUSR1: the job did not go on after its flight records"; }

for sig in TERM; do
  run "$sig"
  [ ! -e "$dir/run.h5" ] || fail "SIG$sig: a main profile was written"
  for r in 0 1; do
    f=$dir/run.signal.rank0000$r.h5
    [ -e "$f" ] || fail "SIG$sig: rank $r wrote no $f"
    "$check" --signal "$f" "$r" 2 "SIG$sig" || fail "SIG$sig: $f"
    "$report" profile "$f" >"$dir/report.txt" || fail "SIG$sig: commscope-report profile $f"
    head_line=$(grep "^1 ranks, " "$dir/report.txt")
    case "$head_line" in *"job_rank $r,"*"signal SIG$sig"*) ;; *) false ;; esac &&
      case "$head_line" in *"job_nranks 2,"*) ;; *) false ;; esac || {
      cat "$dir/report.txt"
      fail "SIG$sig: the report of $f"
    }
  done
done

run TERM COMMSCOPE_SIGNALS=0
ls "$dir"/*.h5 2>/dev/null && fail "COMMSCOPE_SIGNALS=0: a profile was written"

rm -rf "$dir" && mkdir -p "$dir"
# shellcheck disable=SC2086
"$mpiexec" -np 1 $flags -x COMMSCOPE_SIGNALS=maybe -x COMMSCOPE_PROFILE_OUT="$dir/run.h5" -x LD_PRELOAD="$lib" \
  "$app" 1 >"$dir/log" 2>&1 || fail "COMMSCOPE_SIGNALS=maybe: the run failed"
grep -q "COMMSCOPE_SIGNALS='maybe' is not 0 or 1: signals handled" "$dir/log" || fail "no warning for a bad value"
[ -e "$dir/run.h5" ] || fail "COMMSCOPE_SIGNALS=maybe: no profile at MPI_Finalize"
echo "signal_test: all checks passed"
