#!/usr/bin/env bash
# suite_sweep_fits.sh RUN_SUITE SYNTHETIC_BENCH REPORT OUT_DIR: the bench report's fits at the sizes
# scripts/run-suite.sh sweeps (its bench line's -b, -e at the default --size, and -f), from a
# synthetic file with two known regimes per algorithm (synthetic_bench --sweep: mpi switching
# above 8 MiB, ring above 512 KiB). Each algorithm must be cut at its switch with both lines
# holding. Then the same algorithms swept by 4x (8 B to 32 MiB, one size above mpi's switch):
# the report must say that a denser sweep resolves what does not fit.
set -u
if [ $# -ne 4 ]; then
  echo "usage: $0 RUN_SUITE SYNTHETIC_BENCH REPORT OUT_DIR" >&2
  exit 2
fi
suite=$1 synthetic=$2 report=$3 out=$4
fail() { echo "suite_sweep_fits.sh: FAIL: $*"; exit 1; }
bytes() {  # 64M -> 67108864 (commscope-bench's K, M, G)
  case "$1" in
    *[kK]) echo $((${1%?} * 1024)) ;;
    *[mM]) echo $((${1%?} * 1024 * 1024)) ;;
    *[gG]) echo $((${1%?} * 1024 * 1024 * 1024)) ;;
    *) echo "$1" ;;
  esac
}
line=$(grep -m1 'commscope-bench" all' "$suite") || fail "no commscope-bench line in $suite"
flag() { sed -n "s/.* $1 \([^ ]*\) .*/\1/p" <<<"$line"; }
min=$(flag -b) max=$(flag -e) factor=$(flag -f)
[ "$max" = '"$size"' ] && max=$(sed -n 's/^size=//p' "$suite")
[ -n "$min" ] && [ -n "$max" ] && [ -n "$factor" ] || fail "no -b, -e and -f in: $line"
echo "run-suite.sh sweeps -b $min -e $max -f $factor"
rm -rf "$out" && mkdir -p "$out" || fail "cannot create $out"

# sweep NAME MIN MAX FACTOR: the synthetic file at that sweep and its report in $out/NAME.
sweep() {
  "$synthetic" --sweep "$(bytes "$2")" "$(bytes "$3")" "$4" "$out/$1.h5" || fail "synthetic_bench --sweep"
  "$report" bench "$out/$1.h5" -o "$out/$1" >"$out/$1.txt" || fail "commscope-report bench $out/$1.h5"
  grep "^Fit of" "$out/$1.txt"
}
sweep suite "$min" "$max" "$factor"
# fits.csv: collective,algorithm,regime,from,to,sizes,alpha_us,bandwidth_GBps,R2,max_rel_error,fit
regimes() { tr -d '\r' <"$out/suite/fits.csv" | awk -F, -v a="$1" 'NR > 1 && $2 == a'; }  # CSV: CRLF
for want in "mpi|8388608" "ring|524288"; do  # to_bytes: 8 MiB, 512 KiB
  algo=${want%|*} switch=${want#*|}
  rows=$(regimes "$algo")
  [ "$(grep -c . <<<"$rows")" = 2 ] || fail "$algo: wanted 2 regimes at the suite's sweep, got: $rows"
  [ "$(cut -d, -f5 <<<"$rows" | head -1)" = "$switch" ] || fail "$algo: the first regime should end at $switch: $rows"
  [ "$(cut -d, -f11 <<<"$rows" | sort -u)" = fits ] || fail "$algo: a regime's line does not hold: $rows"
done
grep -q "sweep by 2x" "$out/suite.txt" && fail "the suite's own sweep is told to sweep by 2x"

sweep sparse 8 32M 4
grep -q "at most 4x apart" "$out/sparse.txt" || fail "the 4x sweep's spacing is not said"
grep -q "sweep by 2x (-f 2" "$out/sparse.txt" || fail "the 4x sweep, where mpi does not fit, is not told to sweep by 2x"
echo "suite_sweep_fits.sh: both regimes of mpi and ring fit at the suite's sweep; the 4x sweep is told to sweep by 2x"
