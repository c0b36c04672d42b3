#!/usr/bin/env bash
# Run a command while the machine is busy: one busy loop per online CPU, ended (by their ids)
# when the command ends; exits with the command's status.
#   busy.sh -- command...
set -u
[ "${1:-}" = -- ] && shift
pids=()
for _ in $(seq "$(nproc --all)"); do
  (while :; do :; done) &
  pids+=($!)
done
trap 'kill "${pids[@]}" 2>/dev/null' EXIT
"$@"
