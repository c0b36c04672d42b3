#!/usr/bin/env bash
# A replay that cannot finish must end by its --timeout: a non-zero exit status and, for each
# REGEX, a line from commscope-replay that matches it (one line per rank that timed out).
#   stuck.sh REGEX... -- command...
set -u
regexes=()
while [ "$1" != "--" ]; do regexes+=("$1"); shift; done
shift
log=$(mktemp)
"$@" >"$log" 2>&1
rc=$?
cat "$log"
lines=$(grep '^commscope-replay: ' "$log")
rm -f "$log"
echo "stuck.sh: exit status $rc"
fail=0
[ "$rc" -ne 0 ] || { echo "stuck.sh: FAIL: wanted a non-zero exit status"; fail=1; }
for regex in "${regexes[@]}"; do
  printf '%s\n' "$lines" | grep -Eq -- "$regex" || { echo "stuck.sh: FAIL: no line from commscope-replay matches /$regex/"; fail=1; }
done
exit $fail
