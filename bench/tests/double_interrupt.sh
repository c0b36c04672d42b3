#!/usr/bin/env bash
# Ctrl-C twice, 0.3 s apart (a common habit): the results file must still be published under its
# final name, valid, with the finished lines. Open MPI's mpirun forwards a Ctrl-C to the ranks as
# SIGTERM about 0.4 s late, and exits at once at a second one within 5 s: the ranks never hear of
# the first, and only learn of the second from their launcher's death (nor can what they say then
# reach the terminal: interrupt.sh checks the "kept N rows in FILE" line of a single Ctrl-C).
#   double_interrupt.sh READBACK OUT.h5 -- launcher-and-bench-command...
set -u
# shellcheck source=wait_for_lines.sh
. "$(dirname "$0")/wait_for_lines.sh"
readback=$1 out=$2
shift 2
[ "$1" = "--" ] && shift
rm -f "$out" "$out.partial"
log=$(mktemp)
"$@" --out "$out" >"$log" 2>&1 &
pid=$!
wait_for_lines "$log" '^ *[0-9]' 3 $pid
kill -INT $pid
sleep 0.3
kill -INT $pid 2>/dev/null
wait $pid
rc=$?
sleep 1  # ranks the launcher left behind finish their handlers
cat "$log"
echo "double_interrupt.sh: exit status $rc after two SIGINTs 0.3 s apart"
[ "$rc" -ne 0 ] || { echo "double_interrupt.sh: FAIL: an interrupted run must not exit 0"; rm -f "$log"; exit 1; }
[ -e "$out.partial" ] && { echo "double_interrupt.sh: FAIL: $out.partial was left behind"; rm -f "$log"; exit 1; }
# Where the rows go was said before the first row, the only words that reach the terminal.
grep -qF "# Writing results to $out " "$log" || { echo "double_interrupt.sh: FAIL: the run never said where its results go"; rm -f "$log"; exit 1; }
rm -f "$log"
"$readback" "$out" 3 --status running
