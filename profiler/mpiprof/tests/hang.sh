#!/usr/bin/env bash
# A hang with a known answer (tests/mpi_hang.c) under libcommscope-mpiprof.so with a 2 s watchdog:
# once every rank has written its flight record the job is killed, and `commscope-report hang`'s
# verdict line must match VERDICT (a grep -E pattern); "healthy" must end by itself, status 0,
# with no record written; in "stopped" one rank is stopped (SIGSTOP) and writes none.
#   hang.sh MODE NP VERDICT WORKDIR LIB APP REPORT -- MPIEXEC [FLAGS...]
set -u
mode=$1 np=$2 verdict=$3 work=$4 lib=$5 app=$6 report=$7
shift 7
[ "$1" = "--" ] && shift
me="hang.sh $mode"
. "$(dirname "${BASH_SOURCE[0]}")/records.sh"  # wait_for_records, hang_verdict
fail() { echo "$me: FAIL: $*"; exit 1; }
dir=$work/hang-$mode
rm -rf "$dir" && mkdir -p "$dir" || exit 1
"$@" -np "$np" -x LD_PRELOAD="$lib" -x COMMSCOPE_HANG_TIMEOUT=2 -x COMMSCOPE_PROFILE_OUT="$dir/p.h5" \
  "$app" "$mode" >"$dir/run.log" 2>&1 &
job=$!
if [ "$mode" = healthy ]; then
  wait $job || fail "the healthy run exited $? (log: $dir/run.log)"
  [ -e "$dir/p.flight" ] && fail "a healthy run wrote flight records: $(ls "$dir/p.flight")"
  echo "$me: ok: no flight record"
  exit 0
fi
want=$np
[ "$mode" = stopped ] && want=$((np - 1))
wait_for_records "$dir/p.flight" "$want" 30 $job
# The records as they are while the job hangs, as a person reads them then (ending the job would
# let a stopped rank run again, and its watchdog write one).
rm -rf "$dir/records" && mkdir -p "$dir/records" && cp "$dir/p.flight"/*.flight "$dir/records/" 2>/dev/null
kill -TERM $job 2>/dev/null
sleep 1
kill -KILL $job 2>/dev/null
wait $job 2>/dev/null
found=$(ls "$dir/records" 2>/dev/null | grep -c '\.flight$')
[ "$found" -ge "$want" ] || fail "$found of $np ranks wrote a flight record, $want wanted (log: $dir/run.log)"
hang_verdict "$report" "$dir/records" -o "$dir/report"
printf '%s\n' "$line" | grep -Eq "$verdict" || fail "the verdict does not match '$verdict'"
if [ "$mode" = count ]; then  # the others' records, written at the launcher's SIGTERM: the desync
  also=$(printf '%s\n' "$out" | grep '^Also: desync')
  echo "$me: $also"
  grep -q "^Also: desync at #3 on world: rank 1 allreduce of 32768 B (double, sum); ranks 0, 2 allreduce of 8 B (double, sum)" <<<"$also" ||
    fail "no desync line naming rank 1's 32768 B against the others' 8 B"
fi
[ -f "$dir/report/ranks.csv" ] && [ -f "$dir/report/communicators.csv" ] || fail "no ranks.csv or communicators.csv"
echo "$me: ok"
