#!/usr/bin/env bash
# Ctrl-C in the middle of a run: the results file must be published under its final name,
# valid, holding every line finished before the interrupt.
#   interrupt.sh READBACK OUT.h5 -- launcher-and-bench-command...
set -u
readback=$1 out=$2
shift 2
[ "$1" = "--" ] && shift
rm -f "$out" "$out.partial"
log=$(mktemp)
"$@" --out "$out" >"$log" 2>&1 &
pid=$!
# Wait for a few finished lines (or give up after 60 s).
for _ in $(seq 600); do
  [ "$(grep -c '^ *[0-9]' "$log")" -ge 3 ] && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.1
done
kill -INT $pid
wait $pid
rc=$?
cat "$log"
rm -f "$log"
echo "interrupt.sh: exit status $rc after SIGINT"
[ "$rc" -ne 0 ] || { echo "interrupt.sh: FAIL: an interrupted run must not exit 0"; exit 1; }
[ -e "$out.partial" ] && { echo "interrupt.sh: FAIL: $out.partial was left behind"; exit 1; }
exec "$readback" "$out" 3
