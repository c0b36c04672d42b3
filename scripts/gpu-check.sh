#!/usr/bin/env bash
# On a GPU machine: build the CUDA configuration, run the GPU tests, a bench sweep on device
# buffers (NCCL and our algorithms, 8 B to 1 GiB), a profiled training run and the reports, the
# in-training gap (2 ranks sharing GPU 0, the step against its replay alone: the contention of
# the backward's kernels with the gradients' allreduce), then write a summary table (summary.md)
# to record in docs/gpu-results.md.
#
#   scripts/gpu-check.sh [--out DIR] [--build DIR] [--size BYTES] [--ranks N] [--iters N] [--jobs N] [--no-build]
#   scripts/gpu-check.sh --count-tests CTEST.LOG   (the GPU tests' verdict line of a ctest log)
#
# --ranks: bench ranks (default: one per GPU when mpirun is present, else 1: a single rank
# runs without a launcher); --size: largest bench size (default 1G); --iters: timed iterations
# per bench case (default 20, as the bench's -n and nccl-tests; 0: Google Benchmark picks,
# which takes longer); --jobs: gpu tests run at once (ctest -j, default 1; they share the GPUs,
# and the one that times kernels, profiler.cuda.known_durations, runs alone); --build: build folder (default build-cuda/); --no-build: use it
# as it is. Needs what scripts/setup.sh installs
# (MPI, HDF5, ...) plus the CUDA toolkit with cuBLAS, CUPTI and NCCL (NCCL_HOME if elsewhere).
set -euo pipefail

# --help: this file's opening comment, up to the first line of code, without the '# '.
usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=""
build_dir="$root/build-cuda"
size=1G
ranks=""
iters=20
jobs=1
build=1
die() { echo "gpu-check.sh: $*" >&2; exit 2; }
# count_tests LOG: "GPU tests: P passed, S skipped, F failed (of N)" from a ctest log, and status 1
# when any was skipped or failed: on a GPU machine a GPU test that skips did not run, and ctest's
# own "100% tests passed" counts it as passed.
count_tests() {
  local log=$1 passed skipped failed
  passed=$(grep -cE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .* +Passed ' "$log" || true)
  skipped=$(grep -cE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .*\*\*\*Skipped' "$log" || true)
  failed=$(grep -cE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .*\*\*\*(Failed|Timeout|Exception|Not Run)' "$log" || true)
  echo "GPU tests: $passed passed, $skipped skipped, $failed failed (of $((passed + skipped + failed)))"
  [ "$skipped" = 0 ] && [ "$failed" = 0 ] && [ "$passed" -gt 0 ]
}
if [ "${1:-}" = --count-tests ]; then
  [ $# = 2 ] && [ -r "$2" ] || die "--count-tests needs a readable ctest log"
  count_tests "$2"
  exit $?
fi
while [ $# -gt 0 ]; do
  case "$1" in
    --out) [ $# -ge 2 ] || die "--out needs a folder"; out=$2; shift 2 ;;
    --build) [ $# -ge 2 ] || die "--build needs a folder"; build_dir=$2; shift 2 ;;
    --size) [ $# -ge 2 ] || die "--size needs a value"; size=$2; shift 2 ;;
    --ranks) [ $# -ge 2 ] || die "--ranks needs a value"; ranks=$2; shift 2 ;;
    --iters) [ $# -ge 2 ] || die "--iters needs a value"; iters=$2; shift 2 ;;
    --jobs) [ $# -ge 2 ] || die "--jobs needs a value"; jobs=$2; shift 2 ;;
    --no-build) build=0; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
case "$ranks" in ''|*[!0-9]*|0) [ -z "$ranks" ] || die "--ranks needs a positive integer, not '$ranks'" ;; esac
case "$iters" in ''|*[!0-9]*) die "--iters needs a non-negative integer, not '$iters'" ;; esac
case "$jobs" in ''|*[!0-9]*|0) die "--jobs needs a positive integer, not '$jobs'" ;; esac
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
[ "$ngpu" -gt 0 ] || die "no NVIDIA GPU is usable here (nvidia-smi -L lists none)"
out=${out:-$root/results/gpu-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out" 2>/dev/null && [ -w "$out" ] || die "cannot write the output folder '$out'"
if [ -z "$ranks" ]; then
  if command -v mpirun >/dev/null; then ranks=$ngpu; else ranks=1; fi
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
launch() {  # launch N command...: without a launcher for one rank
  local n=$1
  shift
  if [ "$n" = 1 ]; then "$@"; else mpirun -np "$n" --bind-to none "$@"; fi
}
start=$(date +%s)
step() { echo; echo "== [$1/5] $2 ($(($(date +%s) - start)) s so far)"; }

step 1 "build the CUDA configuration in $build_dir"
if [ $build = 1 ]; then
  cmake -S "$root" -B "$build_dir" -DCOMMSCOPE_CUDA=ON -DCOMMSCOPE_WERROR=ON -DCMAKE_BUILD_TYPE=Release \
    >"$out/configure.log" 2>&1 || { tail -20 "$out/configure.log"; die "configure failed (see $out/configure.log)"; }
  cmake --build "$build_dir" -j "$(nproc)" >"$out/build.log" 2>&1 ||
    { tail -30 "$out/build.log"; die "build failed (see $out/build.log)"; }
fi
bin="$build_dir/bin"
[ -x "$bin/commscope-bench" ] || die "no commscope-bench in $bin"

# Tests labelled gpu4 need four GPUs (one per rank): left out on fewer, where they could only skip.
exclude=()
[ "$ngpu" -ge 4 ] || exclude=(-LE gpu4)
step 2 "the gpu tests (ctest -L gpu${exclude[*]:+ ${exclude[*]}})"
gpu_tests=0
(cd "$build_dir" && ctest -L gpu "${exclude[@]}" -j "$jobs" --output-on-failure) 2>&1 | tee "$out/gpu-tests.log" || gpu_tests=1
count_tests "$out/gpu-tests.log" | tee "$out/gpu-tests-count.txt" || gpu_tests=1
# The measured errors and times behind those verdicts, for the summary (ctest shows a passing
# test's output only with -V).
for t in test_trainer_cuda_kernels test_profiler_cupti_known_durations; do
  [ -x "$bin/$t" ] && { "$bin/$t" >"$out/$t.log" 2>&1 || true; }
done
[ -x "$bin/test_trainer_cuda" ] &&
  { "$bin/test_trainer_cuda" "$root/trainer/tests/data/tiny.txt" --transports nccl >"$out/test_trainer_cuda.log" 2>&1 || true; }

step 3 "commscope-bench on device buffers: every collective, NCCL and our algorithms, 8 B to $size, $ranks ranks"
bench_rc=0
launch "$ranks" "$bin/commscope-bench" all --device cuda --algo all -b 8 -e "$size" -f 4 -c 1 -n "$iters" --stats \
  --out "$out/bench-cuda.h5" 2>&1 | tee "$out/bench-cuda.log" || bench_rc=1

step 4 "commscope-train --device cuda: GPT-2 124M in bf16, profiled, $ranks rank(s)"
# MFU against the datasheet's dense bf16 peak of the GPUs named here (PEAK_TFLOPS overrides;
# unknown GPUs get no MFU, only the fraction of the GEMM rate measured at start).
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
peak=${PEAK_TFLOPS:-}
if [ -z "$peak" ]; then
  case "$gpu_name" in
    *H100*PCIe*) peak=756 ;;
    *H100*NVL*) peak=835 ;;
    *H100*|*H200*|*GH200*) peak=989 ;;
    *A100*) peak=312 ;;
    *) peak=0 ;;
  esac
fi
# The corpus of scripts/get-corpus.sh where it is (a GPU machine often cannot download it), else
# a shard of 1M random GPT-2 tokens in llm.c's format: the step time does not depend on the text.
data=$root/data/kjv.txt
if [ ! -s "$data" ]; then
  data=$out/random-tokens.bin
  python3 - "$data" <<'PY'
import array, random, sys
random.seed(0)
n = 1_000_000
h = array.array("i", [0] * 256); h[0], h[1], h[2] = 20240520, 1, n
with open(sys.argv[1], "wb") as f:
    f.write(h.tobytes()); f.write(array.array("H", (random.randrange(50257) for _ in range(n))).tobytes())
PY
fi
train=("$bin/commscope-train" --device cuda --precision bf16 --model gpt2-124m --batch $((8 * ranks)) --seq 1024
  --steps 20 --log-every 1 --peak-tflops "$peak" --data "$data" --profile "$out/train.h5")
train_rc=0
launch "$ranks" "${train[@]}" 2>&1 | tee "$out/train.log" || train_rc=1

step 5 "reports"
report_rc=0
[ ! -s "$out/bench-cuda.h5" ] || "$bin/commscope-report" bench "$out/bench-cuda.h5" -o "$out/report/bench" \
  >"$out/report-bench.txt" 2>&1 || report_rc=1
[ ! -s "$out/train.h5" ] || "$bin/commscope-report" profile "$out/train.h5" -o "$out/report/profile" \
  >"$out/report-profile.txt" 2>&1 || report_rc=1
# The in-training gap on the GPU (docs/report.md, "Communication in the step"): 2 ranks sharing
# GPU 0 (--transport staged), GPT-2 124M with its gradients' allreduce overlapping the backward's
# kernels, the machine model measured at start-up (--machine-probe); its replay without the
# compute (--gaps none) is each call alone, and the report sets every call against it: contention
# is the transfer beyond alone of the calls the rank's own kernels overlapped.
gap_rc=0
if command -v mpirun >/dev/null; then
  mpirun -np 2 --bind-to none -x CUDA_VISIBLE_DEVICES=0 "$bin/commscope-train" --device cuda --precision bf16 \
    --model gpt2-124m --batch 8 --seq 1024 --steps 10 --transport staged --machine-probe --data "$data" \
    --profile "$out/gap-train.h5" >"$out/gap-train.log" 2>&1 &&
    mpirun -np 2 --bind-to none -x CUDA_VISIBLE_DEVICES=0 "$bin/commscope-replay" "$out/gap-train.h5" --device cuda \
      --gaps none -o "$out/gap-replay.h5" >"$out/gap-replay.log" 2>&1 &&
    "$bin/commscope-report" profile "$out/gap-train.h5" --alone "$out/gap-replay.h5" -o "$out/report/gap" \
      >"$out/report-gap.txt" 2>&1 || gap_rc=1
fi

# --- summary.md: what docs/gpu-results.md records
{
  echo "# commscope GPU check, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo "- device: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | sort | uniq -c | sed 's/^ *//' | paste -sd ';' -)"
  grep -m3 -E "^# (cuda|nccl|CUDA|NCCL)" "$out/bench-cuda.log" | sed 's/^# /- /' || true
  echo "- commands: scripts/gpu-check.sh --size $size --ranks $ranks --iters $iters (bench: $ranks rank(s))"
  echo
  echo "## GPU tests"
  echo
  cat "$out/gpu-tests-count.txt"
  echo
  echo '```'
  grep -E "Test +#|tests passed|skipped" "$out/gpu-tests.log" | head -60 || true
  echo '```'
  for t in test_trainer_cuda_kernels test_trainer_cuda test_profiler_cupti_known_durations; do
    [ -s "$out/$t.log" ] || continue
    case $t in
      test_profiler_cupti_known_durations) title="CUPTI vs known kernel durations ($t)" ;;
      *) title=$t ;;
    esac
    echo
    echo "### $title"
    echo
    echo '```'
    head -120 "$out/$t.log"
    echo '```'
  done
  echo
  echo "## Bench (time us and busbw GB/s by size, out of place; full table in bench-cuda.log)"
  echo
  for csv in "$out"/report/bench/*.csv; do
    [ -e "$csv" ] && [ "$(basename "$csv")" != fits.csv ] || continue
    echo "### $(basename "$csv" .csv)"
    echo
    python3 - "$csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
# time and busbw of each algorithm (one rank has busbw 0 for most collectives: the time tells)
size = "size_bytes" if rows and "size_bytes" in rows[0] else "size"  # the report's CSV since 2026-11-26: bytes
cols = [size] + [c for c in rows[0].keys() if c.endswith("_us") or c.endswith("_busbw")] if rows else []
print("| " + " | ".join(cols) + " |")
print("|" + "---|" * len(cols))
for r in rows:
    print("| " + " | ".join(r[c] for c in cols) + " |")
PY
    echo
  done
  grep -E "Out of bounds|Avg bus bandwidth" "$out/bench-cuda.log" | sed 's/^#/-/' || true
  echo
  echo "## Training"
  echo
  grep -E "^mean step|^step +[0-9]+ " "$out/train.log" | tail -4 | sed 's/^/    /' || true
  if [ -s "$out/report/profile/components.csv" ]; then
    echo
    echo "Breakdown (ms, over every rank and step; kernel + intra-op + inter-op + communication = step):"
    echo
    sed 's/^/    /' "$out/report/profile/components.csv"
  fi
  if [ -s "$out/report-gap.txt" ]; then
    echo
    echo "## The in-training gap (2 ranks sharing GPU 0, staged; the step against its replay alone)"
    echo
    grep -E "^The step's communication" "$out/report-gap.txt" | fold -s -w 100 | sed 's/^/    /' || true
  fi
} >"$out/summary.md"

echo
cat "$out/summary.md"
echo
echo "gpu-check.sh: results in $out (summary.md, logs, HDF5 files, report/)"
status=$((gpu_tests | bench_rc | train_rc | report_rc | gap_rc))
[ $status = 0 ] || echo "gpu-check.sh: some steps failed: gpu tests $gpu_tests, bench $bench_rc, train $train_rc, reports $report_rc, in-training gap $gap_rc"
exit $status
