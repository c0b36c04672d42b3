#!/usr/bin/env bash
# Ctrl-C in the middle of a doctor run: the file must be published under its final name with the
# rounds finished so far, rank 0 must say where ("kept N rows in FILE"), and the report must read it.
#   doctor_interrupt.sh REPORT OUT.h5 -- launcher-and-doctor-command...
set -u
# shellcheck source=wait_for_lines.sh
. "$(dirname "$0")/wait_for_lines.sh"
report=$1 out=$2
shift 2
[ "$1" = "--" ] && shift
rm -f "$out" "$out.partial"
log=$(mktemp)
"$@" -o "$out" >"$log" 2>&1 &
pid=$!
wait_for_lines "$log" '^  pass ' 6 $pid
kill -INT $pid
wait $pid
rc=$?
cat "$log"
kept=$(grep -Ec "^commscope-doctor: rank 0: kept [0-9]+ rows in $out\$" "$log")
rm -f "$log"
echo "doctor_interrupt.sh: exit status $rc after SIGINT"
fail() { echo "doctor_interrupt.sh: FAIL: $*"; exit 1; }
[ "$rc" -ne 0 ] || fail "an interrupted run must not exit 0"
[ -e "$out.partial" ] && fail "$out.partial was left behind"
[ -e "$out" ] || fail "$out was not published"
[ "$kept" = 1 ] || fail "no 'kept N rows in $out' line from rank 0"
"$report" doctor "$out" >/dev/null || fail "the report cannot read $out"
echo "doctor_interrupt.sh: $out published and read back"
