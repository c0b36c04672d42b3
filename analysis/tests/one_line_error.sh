#!/usr/bin/env bash
# one_line_error.sh REGEX -- command...: the command must end with exit status 2 and exactly one
# line on stderr, which matches the extended regex REGEX.
set -u
regex=$1
shift
[ "$1" = "--" ] && shift
err=$("$@" 2>&1 >/dev/null)
rc=$?
printf 'stderr: %s\nexit status %d\n' "$err" "$rc"
fail=0
[ "$rc" -eq 2 ] || { echo "one_line_error.sh: FAIL: wanted exit status 2"; fail=1; }
lines=$(printf '%s\n' "$err" | wc -l)
[ -n "$err" ] && [ "$lines" -eq 1 ] || { echo "one_line_error.sh: FAIL: wanted one line on stderr, got $lines"; fail=1; }
printf '%s\n' "$err" | grep -Eq -- "$regex" || { echo "one_line_error.sh: FAIL: stderr does not match /$regex/"; fail=1; }
exit $fail
