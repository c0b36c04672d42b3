#!/usr/bin/env bash
# A replay that must be refused: one line from commscope-replay naming the problem, exit 2, and
# neither OUT nor OUT.partial written.
#   bad_input.sh REGEX OUT -- command...
set -u
regex=$1 out=$2
shift 3
rm -f "$out" "$out.partial"
log=$(mktemp)
"$@" >"$log" 2>&1
rc=$?
err=$(grep '^commscope-replay: ' "$log")
cat "$log" && rm -f "$log"
echo "bad_input.sh: exit status $rc"
fail=0
[ "$rc" -eq 2 ] || { echo "bad_input.sh: FAIL: wanted exit status 2"; fail=1; }
[ "$(printf '%s\n' "$err" | grep -c .)" -eq 1 ] || { echo "bad_input.sh: FAIL: wanted one line from commscope-replay"; fail=1; }
printf '%s\n' "$err" | grep -Eq -- "$regex" || { echo "bad_input.sh: FAIL: no /$regex/"; fail=1; }
for f in "$out" "$out.partial"; do [ ! -e "$f" ] || { echo "bad_input.sh: FAIL: $f written"; fail=1; }; done
exit $fail
