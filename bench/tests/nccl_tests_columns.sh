#!/usr/bin/env bash
# A script written for nccl-tests' all_reduce_perf, run against ours: it reads the header's
# "# nThread ... minBytes ... maxBytes ... step: ..." line and the "#  Rank N Group G Pid P on HOST
# device D [BUS] NAME" lines as nccl-tests' own parser (src/util.cu) reads them, skips '#' lines
# and reads the result lines by column (1 size, 2 count, 3 type, 4 redop, 5 root, 6-9
# out-of-place time algbw busbw #wrong, 10-13 in-place), busbw in column 8 as `awk '{print $8}'`
# reads it. With --algos A,B the run names several algorithms: every line keeps those 13
# columns and ends with its algorithm (column 14), each size once per algorithm, in order.
#   nccl_tests_columns.sh NRANKS [--algos A,B,...] -- launcher-and-all_reduce_perf-command...
set -eu
nranks=$1 algos=
shift
if [ "$1" = "--algos" ]; then algos=$2; shift 2; fi
[ "$1" = "--" ] && shift
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$@" >"$out"
fail() { cat "$out"; echo "nccl_tests_columns.sh: FAIL: $*"; exit 1; }
lines=$(grep -v '^#' "$out" | grep -E '^ *[0-9]+ ' || true)
[ -n "$lines" ] || fail "no result lines"
# The header's titles stand over the same columns (field 1 of a header line is '#').
algo_title=
[ -n "$algos" ] && algo_title=' +algo'
grep -Eq "^# +size +count +type +redop +root +time +algbw +busbw +#wrong +time +algbw +busbw +#wrong${algo_title} *\$" "$out" ||
  fail "no nccl-tests column header"
# Every line: 13 fields (14 with the algorithm last); float, sum, root -1, no wrong elements;
# algbw = size / time; busbw = algbw * 2(n-1)/n, each side; busbw the 8th field, as nccl-tests'
# scripts read it.
awk -v n="$nranks" -v algos="$algos" '
  function near(a, b) { return (a - b) <= 0.02 * b + 0.002 && (b - a) <= 0.02 * b + 0.002 }
  BEGIN { nalgo = algos == "" ? 0 : split(algos, algo, ",") }
  {
    want = nalgo ? 14 : 13
    if (NF != want) { print "line " NR ": " NF " fields, not " want ": " $0; bad = 1; next }
    if (nalgo && $14 != algo[(NR - 1) % nalgo + 1]) { print "line " NR ": algorithm " $14 ", wanted " algo[(NR - 1) % nalgo + 1]; bad = 1 }
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
# The sizes asked for, in order (each once per algorithm): -b 64K -e 4M -f 4.
sizes=$(awk '!seen[$1]++ {printf "%s ", $1}' <<<"$lines")
[ "$sizes" = "65536 262144 1048576 4194304 " ] || fail "sizes in column 1: $sizes"
# nccl-tests' run line, parsed as its format reads: one thread and GPU per process, the sizes
# asked for.
run=$(grep -E '^# nThread ' "$out" || true)
[[ "$run" =~ ^"# nThread "([0-9]+)" nGpus "([0-9]+)" minBytes "([0-9]+)" maxBytes "([0-9]+)" step: "([0-9.]+)"("(factor|bytes)") warmup iters: "[0-9]+" iters: "[0-9]+" agg iters: "[0-9]+" validation: "[0-9]+" graph: "[0-9]+" unalign: "[0-9]+$ ]] ||
  fail "no nccl-tests '# nThread ... graph: ... unalign: ...' line"
[ "${BASH_REMATCH[1]} ${BASH_REMATCH[2]} ${BASH_REMATCH[3]} ${BASH_REMATCH[4]} ${BASH_REMATCH[5]} ${BASH_REMATCH[6]}" = \
  "1 1 65536 4194304 4 factor" ] || fail "the run line says '$run'"
# One "#  Rank" line per rank, in rank order, as nccl-tests' sscanf format reads them
# ("#  Rank %d Group %d Pid %d on %s device %d [%[^]]] %[^\n]").
awk -v n="$nranks" '
  /^#  Rank / {
    if (!match($0, /^#  Rank +[0-9]+ Group +[0-9]+ Pid +[0-9]+ on +[^ ]+ device +-?[0-9]+ \[[^]]+\] .+$/)) {
      print "not nccl-tests'"'"' rank line: " $0; bad = 1
    }
    if ($3 != r) { print "rank " $3 ", wanted " r; bad = 1 }
    r++
  }
  END { if (bad || r != n) { print r " rank lines for " n " ranks"; exit 1 } }' "$out" || fail "the '#  Rank' lines"
echo "nccl_tests_columns.sh: $(wc -l <<<"$lines") lines read by nccl-tests' columns, $run"
