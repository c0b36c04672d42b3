#!/usr/bin/env bash
# Same-machine replay ratios (docs/replay.md, "Acceptance on a quiet machine"): for each layout,
# commscope-train recorded R times and its first recording replayed M times (--gaps busy), every
# run bound to its own core; the ratio is the median of the replays' communication per step over
# the median of the recordings', each file's figure the median over its steps after the first of
# the profile's communication (wait + transfer, mean over ranks: `commscope-report profile`'s
# iterations.csv), so that both sides are counted alike. Calls and bytes must be identical
# (`commscope-report replay`) in every replay. Each rank is pinned to a CPU of its own (taskset),
# one CPU per core before any core's second hardware thread.
#
#   scripts/replay-ratios.sh [--bin DIR] [--out DIR] [--records R] [--replays M] [--steps N]
#                            [--cpus LIST] [--data FILE] [LAYOUT...]
#
# LAYOUT: "RANKS:TRAINER OPTIONS", e.g. "4:--dp zero3" or "4:--tp 2 --pp 2"; default the four of
# a 16-core machine: "4:--dp ddp" "4:--dp zero3" "4:--tp 2 --pp 2" "8:--dp zero3".
# --records (3) and --replays (5); --steps: training steps a run (15); --cpus: the CPUs (as Linux
# numbers them, "8-15" or "0,2,4") the ranks are pinned to, rank i to the i-th, more ranks than
# CPUs sharing them (default: the first CPU of each core, then the others); --data: the training
# text (default: the repository's docs, concatenated: the step time does not depend on the
# text); --bin: the programs (default build/bin); --out: the files (default
# results/replay-ratios-DATE). The model is `small` at --seq 64 with --algo mpi and one thread a
# rank, --batch 4 (rounded up to a multiple of the ranks) where the layout names none. Writes
# ratios.md (the table) and prints it; exit status 1 where a run failed or a replay's calls or
# bytes differ from its recording's.
set -uo pipefail

usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"; }
die() { echo "replay-ratios.sh: $*" >&2; exit 2; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin="$root/build/bin"
out=""
records=3
replays=5
steps=15
cpus=""
data=""
layouts=()
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) [ $# -ge 2 ] || die "--bin needs a folder"; bin=$2; shift 2 ;;
    --out) [ $# -ge 2 ] || die "--out needs a folder"; out=$2; shift 2 ;;
    --records) [ $# -ge 2 ] || die "--records needs a value"; records=$2; shift 2 ;;
    --replays) [ $# -ge 2 ] || die "--replays needs a value"; replays=$2; shift 2 ;;
    --steps) [ $# -ge 2 ] || die "--steps needs a value"; steps=$2; shift 2 ;;
    --cpus) [ $# -ge 2 ] || die "--cpus needs a list"; cpus=$2; shift 2 ;;
    --data) [ $# -ge 2 ] || die "--data needs a file"; data=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    -*) die "unknown argument '$1' (see --help)" ;;
    *) layouts+=("$1"); shift ;;
  esac
done
for v in records replays steps; do
  case "${!v}" in ''|*[!0-9]*|0) die "--$v needs a positive integer, not '${!v}'" ;; esac
done
[ "$steps" -ge 3 ] || die "--steps needs at least 3 (the first step is left out)"
[ ${#layouts[@]} -gt 0 ] || layouts=("4:--dp ddp" "4:--dp zero3" "4:--tp 2 --pp 2" "8:--dp zero3")
for l in "${layouts[@]}"; do
  case "${l%%:*}" in ''|*[!0-9]*|0) die "layout '$l': RANKS:OPTIONS, RANKS a positive integer" ;; esac
  [ "$l" != "${l#*:}" ] || die "layout '$l': RANKS:OPTIONS"
done
for p in commscope-train commscope-replay commscope-report; do
  [ -x "$bin/$p" ] || die "no $p in '$bin' (--bin)"
done
command -v mpirun >/dev/null || die "no mpirun"
# The CPUs, in the order ranks take them: --cpus expanded, or the first CPU of each core (lscpu),
# then the cores' other hardware threads.
if [ -n "$cpus" ]; then
  pin_cpus=$(python3 -c 'import sys
out = []
for part in sys.argv[1].split(","):
    a, _, b = part.partition("-")
    out += range(int(a), int(b or a) + 1)
print(" ".join(map(str, out)))' "$cpus" 2>/dev/null) || die "--cpus '$cpus' is not a list of CPUs (8-15, or 0,2,4)"
else
  pin_cpus=$(lscpu -p=CPU,CORE 2>/dev/null | grep -v '^#' | sort -t, -k2,2n -k1,1n |
    awk -F, '{ if (seen[$2]++) rest = rest " " $1; else first = first " " $1 } END { print substr(first rest, 2) }')
  [ -n "$pin_cpus" ] || pin_cpus=$(seq -s ' ' 0 $(($(nproc) - 1)))
fi
command -v taskset >/dev/null || die "no taskset (util-linux)"
out=${out:-$root/results/replay-ratios-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out" 2>/dev/null && [ -w "$out" ] || die "cannot write the output folder '$out'"
if [ -z "$data" ]; then
  data=$out/corpus.txt
  cat "$root"/docs/*.md "$root"/README.md >"$data"
fi
[ -s "$data" ] || die "no training text '$data'"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

export COMMSCOPE_PIN_CPUS=$pin_cpus
pin=$out/pin.sh
cat >"$pin" <<'PIN'
#!/usr/bin/env bash
# A rank pinned to its CPU: the local rank's entry of COMMSCOPE_PIN_CPUS (modulo their count).
read -r -a cpus <<<"$COMMSCOPE_PIN_CPUS"
r=${OMPI_COMM_WORLD_LOCAL_RANK:-${MPI_LOCALRANKID:-${SLURM_LOCALID:-0}}}
exec taskset -c "${cpus[$((r % ${#cpus[@]}))]}" "$@"
PIN
chmod +x "$pin"
launch() {
  local n=$1
  shift
  mpirun -np "$n" --oversubscribe --bind-to none -x COMMSCOPE_PIN_CPUS "$pin" "$@"
}
# The median over the steps after the first of wait + transfer in FILE's profile (ms).
comm_ms() {
  local dir=$1.report
  "$bin/commscope-report" profile "$1" -o "$dir" >/dev/null 2>&1 || return 1
  python3 - "$dir/iterations.csv" <<'PY'
import csv, statistics, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if int(r["step"]) >= 1]
print(f'{statistics.median(float(r["comm_wait"]) + float(r["comm_transfer"]) for r in rows):.4g}')
PY
}
median() { python3 -c 'import statistics, sys; print(f"{statistics.median(float(x) for x in sys.argv[1:]):.4g}")' "$@"; }

status=0
table=$out/ratios.md
{
  echo "| layout | ranks | recorded comm ms/step (median of $records; each) | replayed (median of $replays; each) | replayed / recorded | calls and bytes |"
  echo "|---|---:|---|---|---:|---|"
} >"$table"
i=0
for l in "${layouts[@]}"; do
  i=$((i + 1))
  n=${l%%:*}
  read -r -a opts <<<"${l#*:}"
  case " ${opts[*]} " in *" --batch "*) ;; *) opts+=(--batch $(((4 + n - 1) / n * n))) ;; esac
  name=$(printf '%s' "${l#*:}" | tr -c 'A-Za-z0-9' '_' | sed 's/__*/_/g; s/^_//; s/_$//')
  dir=$out/$i-$n-$name
  mkdir -p "$dir"
  recorded=() replayed=() same="identical"
  echo "== $n ranks, ${l#*:}: $records recordings, $replays replays"
  for r in $(seq 1 "$records"); do
    if launch "$n" "$bin/commscope-train" --model small --seq 64 --steps "$steps" --threads 1 \
      --data "$data" --algo mpi "${opts[@]}" --profile "$dir/record$r.h5" >"$dir/record$r.log" 2>&1 &&
      c=$(comm_ms "$dir/record$r.h5"); then
      recorded+=("$c")
    else
      echo "replay-ratios.sh: recording $r of '$l' failed (see $dir/record$r.log)" >&2
      status=1
    fi
  done
  if [ -s "$dir/record1.h5" ]; then
    for r in $(seq 1 "$replays"); do
      if launch "$n" "$bin/commscope-replay" "$dir/record1.h5" --algo mpi --gaps busy -o "$dir/replay$r.h5" \
        >"$dir/replay$r.log" 2>&1 && c=$(comm_ms "$dir/replay$r.h5"); then
        replayed+=("$c")
        "$bin/commscope-report" replay "$dir/record1.h5" "$dir/replay$r.h5" >"$dir/replay$r.report.txt" 2>&1
        grep -q "Calls and bytes identical in all" "$dir/replay$r.report.txt" || { same="DIFFER (replay $r)"; status=1; }
      else
        echo "replay-ratios.sh: replay $r of '$l' failed (see $dir/replay$r.log)" >&2
        status=1
      fi
    done
  fi
  if [ ${#recorded[@]} -gt 0 ] && [ ${#replayed[@]} -gt 0 ]; then
    mrec=$(median "${recorded[@]}") mrep=$(median "${replayed[@]}")
    ratio=$(python3 -c "print(f'{$mrep / $mrec:.3f}')")
    echo "| ${l#*:} | $n | $mrec (${recorded[*]}) | $mrep (${replayed[*]}) | $ratio | $same |" >>"$table"
  else
    echo "| ${l#*:} | $n | ${recorded[*]:--} | ${replayed[*]:--} | - | runs failed |" >>"$table"
  fi
done
echo
cat "$table"
echo
echo "replay-ratios.sh: $(nproc) CPUs; rank i pinned to the i-th of CPUs $pin_cpus; files in $out"
exit $status
