#!/usr/bin/env bash
# --reprobe-after is rank 0's to decide, for every rank: the end-of-run measurement of the rates
# by size is collective, and each rank reading its own clock against the threshold could fall on
# either side of it (a run lasting the threshold to the millisecond), one rank measuring while the
# others had left: the run hung (a 2-host CI run of cluster.bench.verdict_good timed out at 300 s).
# Here the ranks are told different thresholds (an MPMD launch: rank 0 --reprobe-after 0, rank 1
# -1, then the other way round), so that each reading its own would part them every time: the
# runs end, and the header's rates say "measured again" exactly when rank 0 was told 0.
#   reprobe_ranks.sh WORK BENCH NP_FLAG -- MPIRUN...
set -u
work=$1 bench=$2 np=$3
shift 3
[ "$1" = "--" ] && shift
me=reprobe_ranks.sh
command -v h5dump >/dev/null || { echo "$me: no h5dump: skipped"; exit 77; }
fail() { echo "$me: FAIL: $*"; exit 1; }
for order in "0 -1" "-1 0"; do
  read -r first second <<<"$order"
  f=$work/reprobe-ranks.h5
  rm -f "$f"
  args=(allreduce --algo ring -b 8 -e 8 -n 2 -w 1 --out "$f")
  timeout 60 "$@" "$np" 1 "$bench" "${args[@]}" --reprobe-after "$first" : "$np" 1 "$bench" "${args[@]}" \
    --reprobe-after "$second" >"$work/reprobe-ranks.log" 2>&1
  rc=$?
  [ $rc = 124 ] && { cat "$work/reprobe-ranks.log"; fail "rank 0 --reprobe-after $first, rank 1 $second: hung (killed after 60 s)"; }
  [ $rc = 0 ] || { cat "$work/reprobe-ranks.log"; fail "rank 0 --reprobe-after $first, rank 1 $second: exit $rc"; }
  model=$(h5dump -a /meta/machine_model "$f") || fail "no /meta machine_model in $f"
  again=no
  [[ $model == *"measured again at the end of the run"* ]] && again=yes
  want=no
  [ "$first" = 0 ] && want=yes
  [ $again = $want ] || fail "rank 0 --reprobe-after $first: measured again at the end: $again, wanted $want"
  echo "$me: rank 0 --reprobe-after $first, rank 1 $second: ended, measured again at the end: $again"
done
echo "$me: ok"
