#!/usr/bin/env bash
# A script written for nccl-tests' all_reduce_perf, run against ours: it skips '#' lines and
# reads the result lines by column (1 size, 2 count, 3 type, 4 redop, 5 root, 6-9 out-of-place
# time algbw busbw #wrong, 10-13 in-place), busbw in column 8 as `awk '{print $8}'` reads it.
#   nccl_tests_columns.sh NRANKS -- launcher-and-all_reduce_perf-command...
set -eu
nranks=$1
shift
[ "$1" = "--" ] && shift
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$@" >"$out"
fail() { cat "$out"; echo "nccl_tests_columns.sh: FAIL: $*"; exit 1; }
lines=$(grep -v '^#' "$out" | grep -E '^ *[0-9]+ ' || true)
[ -n "$lines" ] || fail "no result lines"
# The header's titles stand over the same columns (field 1 of a header line is '#').
grep -Eq '^# +size +count +type +redop +root +time +algbw +busbw +#wrong +time +algbw +busbw +#wrong *$' "$out" ||
  fail "no nccl-tests column header"
# Every line: 13 fields; float, sum, root -1, no wrong elements; algbw = size / time; busbw =
# algbw * 2(n-1)/n, each side; busbw the 8th field, as nccl-tests' scripts read it.
awk -v n="$nranks" '
  function near(a, b) { return (a - b) <= 0.02 * b + 0.002 && (b - a) <= 0.02 * b + 0.002 }
  {
    if (NF != 13) { print "line " NR ": " NF " fields, not 13: " $0; bad = 1; next }
    if ($3 != "float" || $4 != "sum" || $5 != -1 || $9 != 0 || $13 != 0) { print "line " NR ": ids or #wrong: " $0; bad = 1 }
    if ($2 * 4 != $1) { print "line " NR ": count " $2 " is not size/4: " $0; bad = 1 }
    for (s = 6; s <= 10; s += 4) {
      algbw = $1 / ($s * 1000)
      if (!near($(s + 1), algbw)) { print "line " NR ": algbw " $(s + 1) " is not size/time " algbw; bad = 1 }
      if (!near($(s + 2), $(s + 1) * 2 * (n - 1) / n)) { print "line " NR ": busbw " $(s + 2) " is not algbw*2(n-1)/n"; bad = 1 }
    }
    sizes = sizes " " $1
    busbw = busbw " " $8
  }
  END {
    if (bad) exit 1
    print "sizes (column 1):" sizes
    print "busbw (column 8):" busbw
  }' <<<"$lines" || fail "the columns are not nccl-tests'"
# The sizes asked for, in order: -b 64K -e 4M -f 4.
[ "$(awk '{printf "%s ", $1}' <<<"$lines")" = "65536 262144 1048576 4194304 " ] || fail "sizes in column 1"
echo "nccl_tests_columns.sh: $(wc -l <<<"$lines") lines read by nccl-tests' columns"
