#!/usr/bin/env bash
# Run a command and check how it ends:
#   expect.sh RC REGEX MAX_SECONDS -- command...
# RC: the exit status wanted, or "nonzero". REGEX: an extended regex the combined output must
# match ("" for none). MAX_SECONDS: the run must end within this time (0: no limit).
set -u
want_rc=$1 regex=$2 max_s=$3
shift 3
[ "$1" = "--" ] && shift
start=$(date +%s%N)
out=$("$@" 2>&1)
rc=$?
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
elapsed=$((elapsed_ms / 1000)).$(printf %03d $((elapsed_ms % 1000)))
printf '%s\n' "$out"
echo "expect.sh: exit status $rc after ${elapsed} s"
fail=0
if [ "$want_rc" = nonzero ]; then
  [ "$rc" -ne 0 ] || { echo "expect.sh: FAIL: wanted a non-zero exit status"; fail=1; }
elif [ "$rc" -ne "$want_rc" ]; then
  echo "expect.sh: FAIL: wanted exit status $want_rc"; fail=1
fi
if [ -n "$regex" ] && ! printf '%s\n' "$out" | grep -Eq -- "$regex"; then
  echo "expect.sh: FAIL: output does not match /$regex/"; fail=1
fi
if [ "$max_s" != 0 ] && [ "$elapsed_ms" -gt $((max_s * 1000)) ]; then
  echo "expect.sh: FAIL: took longer than $max_s s"; fail=1
fi
exit $fail
