# Sourced by the hang tests: wait_for_records DIR COUNT SECONDS [PID] returns 0 once DIR holds
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
