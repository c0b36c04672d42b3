#!/usr/bin/env bash
# one_line_error.sh REGEX -- command...: the command must end with exit status 2 and print exactly
# one line (stdout and stderr together), matching REGEX: bad input stops it before any report.
set -u
regex=$1
shift
[ "$1" = "--" ] && shift
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
lines=$(printf '%s\n' "$out" | wc -l)
[ "$rc" -eq 2 ] || { echo "one_line_error.sh: FAIL: exit status $rc, wanted 2"; exit 1; }
[ "$lines" -eq 1 ] || { echo "one_line_error.sh: FAIL: $lines lines of output, wanted 1"; exit 1; }
printf '%s\n' "$out" | grep -Eq -- "$regex" || { echo "one_line_error.sh: FAIL: no match for /$regex/"; exit 1; }
