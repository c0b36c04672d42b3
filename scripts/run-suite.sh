#!/usr/bin/env bash
# Install what is missing, build, and run the whole suite on localhost ranks (or a cluster):
#   1. commscope-bench: every collective and algorithm, 8 B to 64 MiB, checked
#   2. commscope-train --model small, profiled, at 1 rank and at --ranks ranks
#   3. commscope-report: bench, profile and scaling reports (Markdown + CSV + plots), a trace
# Everything goes to results/<date-time>/ (or --out); a one-screen summary ends the run.
#
#   scripts/run-suite.sh [--ranks N] [--quick] [--out DIR] [--hostfile FILE] [--launcher mpirun|srun]
#                        [--size BYTES] [--steps N] [--no-build]
#
# --ranks: ranks of the multi-rank runs (default: the cores here, at least 2); --quick: bench
# up to 1 MiB and 5 training steps; --hostfile: mpirun's hostfile (clusters); --launcher srun:
# inside a Slurm allocation (see scripts/slurm/); --no-build: use build/ as it is (clusters: build
# once with scripts/setup.sh first). Steps print one line per size or step.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ranks=$(nproc)
[ "$ranks" -ge 2 ] || ranks=2
size=64M
steps=20
quick=0
out=""
hostfile=""
launcher=mpirun
build=1
die() { echo "run-suite.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --ranks) [ $# -ge 2 ] || die "--ranks needs a value"; ranks=$2; shift 2 ;;
    --size) [ $# -ge 2 ] || die "--size needs a value"; size=$2; shift 2 ;;
    --steps) [ $# -ge 2 ] || die "--steps needs a value"; steps=$2; shift 2 ;;
    --quick) quick=1; size=1M; steps=5; shift ;;
    --no-build) build=0; shift ;;
    --out) [ $# -ge 2 ] || die "--out needs a folder"; out=$2; shift 2 ;;
    --hostfile) [ $# -ge 2 ] || die "--hostfile needs a file"; hostfile=$2; shift 2 ;;
    --launcher) [ $# -ge 2 ] || die "--launcher needs mpirun or srun"; launcher=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
case "$ranks" in ''|*[!0-9]*|0) die "--ranks needs a positive integer, not '$ranks'" ;; esac
case "$steps" in ''|*[!0-9]*|0) die "--steps needs a positive integer, not '$steps'" ;; esac
case "$launcher" in mpirun|srun) ;; *) die "--launcher must be mpirun or srun, not '$launcher'" ;; esac
[ -z "$hostfile" ] || [ -r "$hostfile" ] || die "cannot read the hostfile '$hostfile'"
[ -z "$hostfile" ] || [ "$launcher" = mpirun ] || die "--hostfile is for mpirun; srun takes its hosts from Slurm"

out=${out:-$root/results/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out" 2>/dev/null || die "cannot create the output folder '$out'"
[ -w "$out" ] || die "the output folder '$out' is not writable"

if [ $build = 1 ]; then
  "$root/scripts/setup.sh"
else
  [ -x "$root/build/bin/commscope-bench" ] || die "--no-build but build/ has no binaries: run scripts/setup.sh first"
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
bin="$root/build/bin"
launch() {  # launch N command...
  local n=$1
  shift
  if [ "$launcher" = srun ]; then
    srun -n "$n" "$@"
  else
    mpirun -np "$n" --oversubscribe --bind-to none ${hostfile:+--hostfile "$hostfile"} "$@"
  fi
}
start=$(date +%s)
step() { echo; echo "== [$1/6] $2 ($(($(date +%s) - start)) s so far)"; }

iters=$([ $quick = 1 ] && echo 5 || echo 20)
step 1 "commscope-bench: every collective and algorithm, 8 B to $size, $ranks ranks, checked"
launch "$ranks" "$bin/commscope-bench" all --algo all -b 8 -e "$size" -f 4 -n "$iters" -c 1 \
  --out "$out/bench.h5" | tee "$out/bench.log"

# The trainer's global batch is the same at 1 and N ranks (strong scaling): a multiple of N.
batch=$(( (8 + ranks - 1) / ranks * ranks ))
train=("$bin/commscope-train" --model small --steps "$steps" --batch "$batch" --val-every 0 --log-every 1)
step 2 "commscope-train --model small, $steps steps, global batch $batch, 1 rank, profiled"
launch 1 "${train[@]}" --profile "$out/train-np1.h5" | tee "$out/train-np1.log"
step 3 "commscope-train --model small, $steps steps, global batch $batch, $ranks ranks, profiled"
launch "$ranks" "${train[@]}" --profile "$out/train-np$ranks.h5" | tee "$out/train-np$ranks.log"

step 4 "commscope-report bench"
"$bin/commscope-report" bench "$out/bench.h5" -o "$out/report/bench" >"$out/report-bench.txt"
step 5 "commscope-report profile and scaling"
"$bin/commscope-report" profile "$out/train-np$ranks.h5" -o "$out/report/profile" >"$out/report-profile.txt"
"$bin/commscope-report" scaling "$out/train-np1.h5" "$out/train-np$ranks.h5" -o "$out/report/scaling" \
  >"$out/report-scaling.txt"
step 6 "trace export (ui.perfetto.dev)"
"$bin/commscope-report" trace "$out/train-np$ranks.h5" -o "$out/trace-np$ranks.json"

# --- the one-screen summary, from the reports' CSV files
csv_table() {  # csv_table FILE COLUMNS...: the named columns, aligned
  python3 - "$@" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
cols = sys.argv[2:]
table = [cols] + [[r.get(c, "") for c in cols] for r in rows]
w = [max(len(row[i]) for row in table) for i in range(len(cols))]
for row in table:
    print("  " + "  ".join(v.rjust(w[i]) for i, v in enumerate(row)))
PY
}
echo
echo "================ commscope suite: $ranks ranks, $(($(date +%s) - start)) s ================"
echo "Collectives (alpha-beta fits of every algorithm; bandwidth in GB/s):"
csv_table "$out/report/bench/fits.csv" collective algorithm alpha_us bandwidth_GBps R2 | head -30
grep -E "Out of bounds" "$out/bench.log" | tail -1 | sed 's/^#*/ /'
echo "Training (small), 1 and $ranks ranks:"
grep -h "^mean step" "$out/train-np1.log" "$out/train-np$ranks.log" | sed 's/^/  /'
echo "Scaling 1 -> $ranks ranks:"
csv_table "$out/report/scaling/scaling.csv" ranks t_iter_ms t_comp_ms t_comm_ms speedup comm_eff predicted_w1 error_w1
echo "Breakdown at $ranks ranks (ms):"
csv_table "$out/report/profile/components.csv" component median_ms p10_ms p90_ms share_of_step
echo "Files: $out (report/*/report.md, HDF5 files, trace-np$ranks.json)"
