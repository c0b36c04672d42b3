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
