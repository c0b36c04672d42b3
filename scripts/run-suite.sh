#!/usr/bin/env bash
# Install what is missing, build, and run the whole suite on localhost ranks (or a cluster):
#   1. commscope-bench: every collective and algorithm, 8 B to 64 MiB by 2x, checked
#   2. commscope-train --model small, profiled, at 1 rank and at --ranks ranks, and the step's
#      collective calls alone (commscope-bench --from-profile)
#   3. commscope-report: bench, profile and scaling reports (Markdown + CSV + plots), a trace
#   4. scripts/check-report.py: the reports' numbers against the HDF5 files (read with h5py)
#   (the summary's verdicts: scripts/suite-verdicts.py, from the bench report's Verdict lines)
# Everything goes to results/<date-time>/ (or --out); a one-screen summary ends the run.
#
#   scripts/run-suite.sh [--ranks N] [--quick] [--out DIR] [--hostfile FILE] [--launcher mpirun|srun]
#                        [--cluster N [--link RATE] [--host-link HOST=RATE]...] [--link-rate HOST=RATE]...
#                        [--size BYTES] [--steps N] [--device cpu|cuda] [--no-build] [--bin DIR]
#
# --ranks: ranks of the multi-rank runs (default: the cores here, at least 2); --quick: bench
# up to 1 MiB, 5 training steps of a global batch of 4, not 8; --hostfile: mpirun's hostfile (clusters; the hostfile of an
# emulated cluster, /run/PREFIX/hostfile, launches through scripts/emulate-cluster.sh mpirun);
# --cluster N: emulate N hosts here for the run (root; emulate-cluster.sh up N, --ranks spread
# over them, down at the end; --link RATE shapes every host's link, as tc writes it, and is the
# bench's nominal rate of each host, `--link-rate '*=RATE'`; --host-link host2=100mbit slows one
# host's link without telling the bench: the doctor's pairs find it); --link-rate HOST=RATE: a
# host's nominal link rate for the bench's verdicts (shaped or virtual links report nothing useful;
# repeatable, `*` for every host); --launcher srun: inside a Slurm allocation (see scripts/slurm/);
# --device cuda: the bench on GPU buffers (NCCL and our algorithms) and the trainer on the GPUs
# (bf16, NCCL), one GPU per rank; --no-build: use build/ as it is (clusters: build once with
# scripts/setup.sh first); --bin: the binaries in DIR (another build; implies --no-build).
# Steps print one line per size or step. Docs: docs/suite.md.
set -euo pipefail

# --help: this file's opening comment, up to the first line of code, without the '# '.
usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ranks=$(nproc)
[ "$ranks" -ge 2 ] || ranks=2
size=64M
steps=20
quick=0
out=""
hostfile=""
launcher=mpirun
device=cpu
build=1
bin=""
cluster=""
link=""
host_links=()
link_rates=()
die() { echo "run-suite.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --ranks) [ $# -ge 2 ] || die "--ranks needs a value"; ranks=$2; shift 2 ;;
    --size) [ $# -ge 2 ] || die "--size needs a value"; size=$2; shift 2 ;;
    --steps) [ $# -ge 2 ] || die "--steps needs a value"; steps=$2; shift 2 ;;
    --quick) quick=1; size=1M; steps=5; shift ;;
    --no-build) build=0; shift ;;
    --bin) [ $# -ge 2 ] || die "--bin needs a folder"; bin=$2; build=0; shift 2 ;;
    --out) [ $# -ge 2 ] || die "--out needs a folder"; out=$2; shift 2 ;;
    --hostfile) [ $# -ge 2 ] || die "--hostfile needs a file"; hostfile=$2; shift 2 ;;
    --cluster) [ $# -ge 2 ] || die "--cluster needs a host count"; cluster=$2; shift 2 ;;
    --link) [ $# -ge 2 ] || die "--link needs a rate like 1gbit"; link=$2; shift 2 ;;
    --host-link) [ $# -ge 2 ] || die "--host-link needs HOST=RATE"; host_links+=(--host-link "$2"); shift 2 ;;
    --link-rate) [ $# -ge 2 ] || die "--link-rate needs HOST=RATE"; link_rates+=(--link-rate "$2"); shift 2 ;;
    --launcher) [ $# -ge 2 ] || die "--launcher needs mpirun or srun"; launcher=$2; shift 2 ;;
    --device) [ $# -ge 2 ] || die "--device needs cpu or cuda"; device=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
case "$ranks" in ''|*[!0-9]*|0) die "--ranks needs a positive integer, not '$ranks'" ;; esac
case "$steps" in ''|*[!0-9]*|0) die "--steps needs a positive integer, not '$steps'" ;; esac
case "$launcher" in mpirun|srun) ;; *) die "--launcher must be mpirun or srun, not '$launcher'" ;; esac
case "$device" in cpu|cuda) ;; *) die "--device must be cpu or cuda, not '$device'" ;; esac
[ -z "$hostfile" ] || [ -r "$hostfile" ] || die "cannot read the hostfile '$hostfile'"
[ -z "$hostfile" ] || [ "$launcher" = mpirun ] || die "--hostfile is for mpirun; srun takes its hosts from Slurm"
if [ -n "$cluster" ]; then
  case "$cluster" in ''|*[!0-9]*|0) die "--cluster needs a positive host count, not '$cluster'" ;; esac
  [ -z "$hostfile" ] && [ "$launcher" = mpirun ] || die "--cluster makes its own hosts: not with --hostfile or --launcher srun"
fi
[ -n "$cluster" ] || [ -z "$link$(printf %s "${host_links[@]+"${host_links[@]}"}")" ] ||
  die "--link and --host-link shape an emulated cluster's links: they need --cluster N"
case "$link" in ''|[0-9]*[kmg]bit|[0-9]*bit) ;; *) die "--link: a tc rate like 100mbit or 1gbit, not '$link'" ;; esac
# The shaped rate is each host's nominal one, unless the user says otherwise.
[ -z "$link" ] || [ ${#link_rates[@]} -gt 0 ] || link_rates=(--link-rate "*=$link")

out=${out:-$root/results/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out" 2>/dev/null || die "cannot create the output folder '$out'"
[ -w "$out" ] || die "the output folder '$out' is not writable"

if [ $build = 1 ]; then
  "$root/scripts/setup.sh"
fi
bin=${bin:-$root/build/bin}
for tool in commscope-bench commscope-train commscope-report; do
  [ -x "$bin/$tool" ] || die "no $tool in $bin: build first (scripts/setup.sh), or give --bin the build's bin folder"
done
python=""
for candidate in python3 /usr/bin/python3; do
  if "$candidate" -c "import h5py" 2>/dev/null; then python=$candidate; break; fi
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# An emulated cluster: made here for the run (--cluster), or already up (its hostfile given).
# mpirun then runs through the cluster's launcher, inside its first host.
emulate=$root/scripts/emulate-cluster.sh
emulated=""
if [ -n "$cluster" ]; then
  emulated=commscope-suite
  trap '"$emulate" down --prefix "$emulated" >/dev/null 2>&1 || true' EXIT
  trap 'exit 130' INT TERM HUP
  "$emulate" up "$cluster" --slots $(( (ranks + cluster - 1) / cluster )) ${link:+--link "$link"} \
    ${host_links[@]+"${host_links[@]}"} --prefix "$emulated" ||
    { rc=$?; [ $rc != 77 ] || rc=2; echo "run-suite.sh: --cluster $cluster: no emulated cluster (above)" >&2; exit $rc; }
  hostfile=/run/$emulated/hostfile
elif [ -n "$hostfile" ]; then
  dir=$(dirname "$(realpath "$hostfile")")
  if [ -x "$dir/agent" ] && grep -q "emulate-cluster.sh" "$dir/agent" 2>/dev/null; then emulated=$(basename "$dir"); fi
fi
[ -z "$emulated" ] || echo "run-suite.sh: launching across the emulated cluster '$emulated' ($(grep -c . "$hostfile") hosts)"
launch() {  # launch N command...
  local n=$1
  shift
  if [ "$launcher" = srun ]; then
    srun -n "$n" "$@"
  elif [ -n "$emulated" ]; then
    "$emulate" mpirun --prefix "$emulated" -np "$n" --oversubscribe --bind-to none --hostfile "$hostfile" "$@"
  else
    mpirun -np "$n" --oversubscribe --bind-to none ${hostfile:+--hostfile "$hostfile"} "$@"
  fi
}
start=$(date +%s)
step() { echo; echo "== [$1/7] $2 ($(($(date +%s) - start)) s so far)"; }

iters=$([ $quick = 1 ] && echo 5 || echo 20)
# By 2x: the report's fits need 3 sizes a regime, and by 4x Open MPI's switch above 8 MiB would
# leave 32 MiB alone above it (analysis.report.suite_sweep_fits reads the sweep from this line).
step 1 "commscope-bench: every collective and algorithm, 8 B to $size by 2x, $ranks ranks ($device), checked"
# Several hosts: the doctor's pairs first, quickly (no probes, no node allreduce, 2 passes of 256 KiB
# messages), and their file to the bench (--doctor), whose machine model then holds each host's
# measured link beside its nominal one, so that a verdict can name a slow host. One host: no pairs
# between hosts to measure.
nhosts=1
if [ -n "$hostfile" ]; then
  nhosts=$(awk '!/^[[:space:]]*(#|$)/ { print $1 }' "$hostfile" | sort -u | wc -l)
elif [ "$launcher" = srun ]; then
  nhosts=${SLURM_JOB_NUM_NODES:-${SLURM_NNODES:-1}}
fi
doctor=()
if [ "$nhosts" -gt 1 ] && [ -x "$bin/commscope-doctor" ]; then
  echo "run-suite.sh: $nhosts hosts: the doctor's pairs first ($out/doctor.h5, log doctor.log)"
  if launch "$ranks" "$bin/commscope-doctor" --no-probes --no-nodes --passes 2 --bytes 256K --bw-iters 2 \
    --lat-iters 20 -o "$out/doctor.h5" >"$out/doctor.log" 2>&1; then
    doctor=(--doctor "$out/doctor.h5")
  else
    echo "run-suite.sh: the doctor failed (exit $?, see $out/doctor.log): the bench runs without its pairs"
  fi
fi
# --reprobe-after 0: the machine's rates by size measured again at the end of the sweep, however
# short (--quick's lasts seconds), each size's figure the faster of the two moments: a start-up
# that met a slow moment at some size no longer makes that size's rows read above the model.
launch "$ranks" "$bin/commscope-bench" all --algo all --device "$device" -b 8 -e "$size" -f 2 -n "$iters" -c 1 \
  --reprobe-after 0 ${doctor[@]+"${doctor[@]}"} ${link_rates[@]+"${link_rates[@]}"} --out "$out/bench.h5" |
  tee "$out/bench.log"

# The trainer's global batch is the same at 1 and N ranks (strong scaling): a multiple of N, from 8
# sequences (--quick: 4, and the closing validation loss over one batch, not four: half the time).
batch=$([ $quick = 1 ] && echo 4 || echo 8)
batch=$(( (batch + ranks - 1) / ranks * ranks ))
train=("$bin/commscope-train" --model small --steps "$steps" --batch "$batch" --val-every 0 --log-every 1)
if [ $quick = 1 ]; then train+=(--val-batches 1); fi
if [ "$device" = cuda ]; then train+=(--device cuda --precision bf16); fi
step 2 "commscope-train --model small, $steps steps, global batch $batch, 1 rank, profiled"
launch 1 "${train[@]}" --profile "$out/train-np1.h5" | tee "$out/train-np1.log"
step 3 "commscope-train --model small, $steps steps, global batch $batch, $ranks ranks, profiled"
launch "$ranks" "${train[@]}" --profile "$out/train-np$ranks.h5" | tee "$out/train-np$ranks.log"
# The profiled step's collective calls alone, each at its size and algorithm (--from-profile), so
# that the profile's report sets every call against its time alone (docs/report.md).
alone=()
echo "run-suite.sh: the step's collective calls alone ($out/alone-np$ranks.h5, log alone.log)"
if launch "$ranks" "$bin/commscope-bench" --from-profile "$out/train-np$ranks.h5" --device "$device" -n "$iters" -c 1 \
  ${doctor[@]+"${doctor[@]}"} ${link_rates[@]+"${link_rates[@]}"} --out "$out/alone-np$ranks.h5" >"$out/alone.log" 2>&1; then
  alone=(--bench "$out/alone-np$ranks.h5")
else
  echo "run-suite.sh: the calls alone: none measured (exit $?, see $out/alone.log): the profile's report goes without"
fi

step 4 "commscope-report bench"
"$bin/commscope-report" bench "$out/bench.h5" -o "$out/report/bench" >"$out/report-bench.txt"
step 5 "commscope-report profile and scaling"
"$bin/commscope-report" profile "$out/train-np$ranks.h5" ${alone[@]+"${alone[@]}"} -o "$out/report/profile" \
  >"$out/report-profile.txt"
"$bin/commscope-report" scaling "$out/train-np1.h5" "$out/train-np$ranks.h5" -o "$out/report/scaling" \
  >"$out/report-scaling.txt"
step 6 "trace export (ui.perfetto.dev)"
"$bin/commscope-report" trace "$out/train-np$ranks.h5" -o "$out/trace-np$ranks.json"

step 7 "the reports' numbers against the HDF5 files"
checked=""
check_failed=0
if [ -n "$python" ]; then
  check=("$python" "$root/scripts/check-report.py")
  : >"$out/check.txt"
  "${check[@]}" bench "$out/bench.h5" "$out/report/bench" >>"$out/check.txt" || check_failed=1
  "${check[@]}" profile "$out/train-np$ranks.h5" "$out/report/profile" >>"$out/check.txt" || check_failed=1
  "${check[@]}" scaling "$out/train-np1.h5" "$out/train-np$ranks.h5" "$out/report/scaling" >>"$out/check.txt" ||
    check_failed=1
  cat "$out/check.txt"
  if [ $check_failed = 0 ]; then
    checked="its numbers match the HDF5 files ($(grep -o '[0-9]* values match' "$out/check.txt" |
      awk '{n += $1} END {print n}') values compared, scripts/check-report.py)"
  else
    checked="MISMATCH between the report and the HDF5 files: see $out/check.txt"
  fi
else
  echo "skipped: no python3 with h5py (Debian: python3-h5py; scripts/setup.sh installs it)"
  checked="not checked against the HDF5 files (no h5py)"
fi

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
# The summary is printed and saved beside the reports (summary.txt): one screen, the details in
# the reports.
{
echo
echo "================ commscope suite: $ranks ranks, $(($(date +%s) - start)) s ================"
# The bench's environment record: hosts and ranks per host, as its header printed them.
echo "Hosts: $(sed -n 's/^# nhosts: //p' "$out/bench.log" | head -1) ($(sed -n 's/^# hosts: //p' "$out/bench.log" | head -1))"
echo "Collectives (the fastest by its median call at the smallest and the largest size, with the next; every size and fit in report/bench/report.md):"
python3 "$root/scripts/suite-collectives.py" "$out/report/bench"
grep -E "Out of bounds" "$out/bench.log" | tail -1 | sed 's/^#*/ /'
# The bench report's verdicts against the machine model (docs/verdicts.md): counted at each
# collective and algorithm's largest sizes, where the machine moved during the bench a line that
# says so, and the few furthest below their model.
verdicts=$(python3 "$root/scripts/suite-verdicts.py" "$out/report-bench.txt" 3 --bench-log "$out/bench.log")
[ -z "$verdicts" ] || printf 'Verdicts (every one in report/bench/report.md):\n%s\n' "$verdicts"
echo "Training (small), 1 and $ranks ranks:"
grep -h "^mean step" "$out/train-np1.log" "$out/train-np$ranks.log" | sed 's/^/  /'
echo "Scaling 1 -> $ranks ranks:"
csv_table "$out/report/scaling/scaling.csv" ranks cores t_iter_ms t_comp_ms t_comm_ms speedup parallel_eff predicted_speedup prediction_error
echo "Breakdown at $ranks ranks (ms):"
csv_table "$out/report/profile/components.csv" component median_ms p10_ms p90_ms share_of_step
if grep -q "^The step's communication" "$out/report-profile.txt"; then
  echo "Communication in the step at $ranks ranks, each call against the same call alone (report/profile):"
  grep -m1 "^The step's communication" "$out/report-profile.txt" | fold -s -w 110 | sed 's/^/  /'
fi
echo "Report: $checked"
echo "Files: $out (summary.txt, report/*/report.md, HDF5 files, trace-np$ranks.json)"
} | tee "$out/summary.txt"
[ $check_failed = 0 ] || exit 1
