#!/usr/bin/env bash
# A script written for OSU's point-to-point tests, run against ours: it finds the "# OSU MPI ...
# Test" title and the "# Size" column header, skips '#' and blank lines, and reads each result
# line by column as `awk '{print $1, $2}'` does (1 the size, 2 the latency or bandwidth; osu_mbw_mr
# 3 Messages/s; with -c the last field is Validation, which must say Pass).
#   osu_columns.sh TITLE FIELDS MIN MAX -- launcher-and-osu-command...
# TITLE: the test's title ("Latency Test"); FIELDS: fields per line; MIN MAX: the sizes asked.
#   osu_columns.sh --usage REGEX -- command...: exit status 2 and one line, matching REGEX.
set -u
if [ "$1" = --usage ]; then
  regex=$2
  shift 3
  out=$("$@" 2>&1)
  rc=$?
  printf '%s\n' "$out"
  [ "$rc" = 2 ] || { echo "osu_columns.sh: FAIL: exit status $rc, not 2"; exit 1; }
  [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || { echo "osu_columns.sh: FAIL: not one line"; exit 1; }
  printf '%s\n' "$out" | grep -Eq -- "$regex" || { echo "osu_columns.sh: FAIL: not /$regex/"; exit 1; }
  exit 0
fi
title=$1 fields=$2 min=$3 max=$4
shift 5
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$@" >"$out" || { cat "$out"; echo "osu_columns.sh: FAIL: exit status $?"; exit 1; }
fail() { cat "$out"; echo "osu_columns.sh: FAIL: $*"; exit 1; }
grep -Eq "^# OSU MPI(-CUDA)? $title v[0-9.]+$" "$out" || fail "no '# OSU MPI $title' line"
grep -Eq '^# Datatype: MPI_(CHAR|INT|FLOAT)\.$' "$out" || fail "no '# Datatype: MPI_...' line"
grep -Eq '^# Size +(Avg Latency\(us\)|Bandwidth \(MB/s\)|MB/s)' "$out" || fail "no '# Size' column header"
# Result lines: every field a number; sizes doubling from MIN to MAX; the largest size's value
# above zero (a small size of a few short iterations may print 0.00 MB/s on a loaded machine).
awk -v fields="$fields" -v min="$min" -v max="$max" '
  /^#/ || NF == 0 { next }
  {
    if (NF != fields) { print "line " NR ": " NF " fields, not " fields ": " $0; bad = 1 }
    for (i = 1; i <= NF; i++) if ($i !~ /^[0-9]+(\.[0-9][0-9])?$/ && !(i == NF && $i == "Pass")) { print "line " NR ": not a number: " $i; bad = 1 }
    want = n ? (last ? last * 2 : 1) : min
    if ($1 != want) { print "line " NR ": size " $1 ", wanted " want; bad = 1 }
    last = $1; last_value = $2; n++
    values = values " " $1 ":" $2
  }
  END {
    if (!n) { print "no result lines"; exit 1 }
    if (last != max) { print "last size " last ", wanted " max; exit 1 }
    if (last_value <= 0) { print "value " last_value " at " last " B is not above zero"; exit 1 }
    if (bad) exit 1
    print "size:value (columns 1 and 2):" values
  }' "$out" || fail "the columns are not OSU's"
echo "osu_columns.sh: $(grep -cvE '^#|^$' "$out") lines read by OSU's columns"
