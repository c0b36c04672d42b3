# Sourced by the interrupt tests: wait_for_lines LOG REGEX COUNT PID waits until LOG holds COUNT
# lines matching REGEX (a run's finished rows), or PID has ended, or 60 s have passed.
wait_for_lines() {
  local log=$1 regex=$2 count=$3 pid=$4
  for _ in $(seq 600); do
    [ "$(grep -c -- "$regex" "$log")" -ge "$count" ] && return 0
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
}
