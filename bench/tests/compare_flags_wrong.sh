#!/usr/bin/env bash
# compare_flags_wrong.sh BENCH REPORT DIR -- LAUNCHER...: a 2-rank ring allreduce sweep (4 KiB to
# 16 KiB) written twice into DIR, the second with --debug-corrupt; `REPORT compare` of the two
# warns that the second has wrong elements in its 3 rows and marks each wrong row's time "!".
set -u
bench=$1 report=$2 d=$3
shift 3
[ "$1" = "--" ] && shift
fail() { echo "compare_flags_wrong.sh: FAIL: $*"; exit 1; }
sweep=(allreduce --algo ring -b 4K -e 16K -f 2 -n 2)
"$@" 2 "$bench" "${sweep[@]}" --out "$d/cmp-good.h5" > /dev/null || fail "the good run exited with status $?"
"$@" 2 "$bench" "${sweep[@]}" --debug-corrupt --out "$d/cmp-bad.h5" > /dev/null  # exits 1: wrong results
"$report" compare "$d/cmp-good.h5" "$d/cmp-bad.h5" > "$d/cmp.txt" || fail "the comparison exited with status $?"
grep -E 'WARNING: .* has [1-9][0-9]* wrong elements in 3 rows' "$d/cmp.txt" || fail "no warning of 3 wrong rows"
marked=$(grep -cE '^ring +[0-9.]+ KiB .*[0-9]!' "$d/cmp.txt")
[ "$marked" -ge 3 ] || fail "$marked rows marked '!', 3 wanted"
