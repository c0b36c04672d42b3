#!/usr/bin/env bash
# The results file holds what the table showed: run the bench with --out, print the table
# again from the file, and compare the result lines.
#   table_matches.sh READBACK OUT.h5 -- launcher-and-bench-command...
set -eu
readback=$1 out=$2
shift 2
[ "$1" = "--" ] && shift
printed=$(mktemp) reread=$(mktemp)
trap 'rm -f "$printed" "$reread"' EXIT
"$@" --out "$out" >"$printed"
"$readback" "$out" --print >"$reread"
lines() { grep -E '^ +[0-9]+ ' "$1"; }
n=$(lines "$printed" | wc -l)
[ "$n" -gt 0 ] || { echo "table_matches.sh: FAIL: no result lines printed"; exit 1; }
if ! diff <(lines "$printed") <(lines "$reread"); then
  echo "table_matches.sh: FAIL: the file's rows differ from the printed table"; exit 1
fi
echo "table_matches.sh: $n printed lines match the file"
