#!/usr/bin/env bash
# On a GPU machine: build the CUDA configuration, then, in this order (the training step's figures
# first, so that a run stopped early keeps them): a profiled training run, optionally the
# training step beside llm.c's and PyTorch's and the same-machine replay ratios, the GPU tests,
# the GPU doctor (every GPU's rates against its peaks), a bench sweep on device buffers (NCCL and
# our algorithms, 8 B to 1 GiB), the reports and the in-training gap (2 ranks sharing GPU 0, the
# step against its replay alone: the contention of the backward's kernels with the gradients'
# allreduce); then write a summary (summary.md) to record in docs/gpu-results.md.
#
#   scripts/gpu-check.sh [--out DIR] [--build DIR] [--size BYTES] [--collectives LIST] [--ranks N]
#                        [--iters N] [--jobs N] [--no-build] [--anchors DIR] [--replays] [--mutants DIR]
#                        [--baseline BIN] [--only LIST]
#   scripts/gpu-check.sh --count-tests CTEST.LOG   (the GPU tests' verdict line of a ctest log)
#
# The whole check on one GPU within about 8 minutes, from a packed build (scripts/pack-gpu.sh):
#   scripts/gpu-check.sh --no-build --build /tmp/cs/build --collectives allreduce --jobs 4 --anchors DIR --replays \
#     --mutants /tmp/cs/mutants
#
# --ranks: bench ranks (default: one per GPU when mpirun is present, else 1: a single rank
# runs without a launcher); --size: largest bench size (default 1G); --iters: timed iterations
# per bench case (default 20, as the bench's -n and nccl-tests; 0: Google Benchmark picks,
# which takes longer); --collectives: the bench's (default all); --jobs: gpu tests run at once
# (ctest -j, default 1; they share the GPUs, and the ones that time kernels run alone); --build:
# build folder (default build-cuda/); --no-build: use it as it is. --anchors DIR: the training
# step beside llm.c's and PyTorch's (GPT-2 124M, sequence 1024, bf16, B=8 and B=32, each timed by
# its own step lines: commscope-train with our flash attention and with cuDNN's, llm.c's
# train_gpt2cu with cuDNN (DIR/train_gpt2cu_cudnn) and without (DIR/train_gpt2cu), llm.c's
# train_gpt2.py under torch.compile; DIR also holds the token shards train.bin and val.bin in
# llm.c's format). --replays: scripts/replay-ratios.sh's four layouts on the upper half of the
# cores (16 cores: 8 for the 8-rank layout), while the GPU runs of --anchors use the lower half.
# --mutants DIR: scripts/mutants.py's programs (the kernels' test, one fused kernel broken in
# each), run after the gpu tests: each must fail, on the check meant to catch it. --baseline BIN:
# an earlier build's commscope-train, run beside this one (profiled, and with --anchors in the
# side-by-side table): the step and its operators by kind before and after, in one run. --only:
# the steps to run, of tests (with --mutants), doctor, bench, train (with --baseline), side
# (--anchors and --replays) and gap, comma-separated (default all); the reports follow for what
# ran. The summary says when each step started, to plan a run that must fit a time.
# Needs what scripts/setup.sh installs (MPI, HDF5, ...) plus the CUDA toolkit with cuBLAS, CUPTI
# and NCCL (NCCL_HOME if elsewhere), or a packed build (scripts/pack-gpu.sh).
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
collectives=all
anchors=""
replays=0
mutants=""
baseline=""
only=tests,doctor,bench,train,side,gap
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
    --collectives) [ $# -ge 2 ] || die "--collectives needs a list"; collectives=$2; shift 2 ;;
    --anchors) [ $# -ge 2 ] || die "--anchors needs a folder"; anchors=$(realpath -m "$2"); shift 2 ;;
    --replays) replays=1; shift ;;
    --mutants) [ $# -ge 2 ] || die "--mutants needs a folder"; mutants=$(realpath -m "$2"); shift 2 ;;
    --baseline) [ $# -ge 2 ] || die "--baseline needs a program"; baseline=$(realpath -m "$2"); shift 2 ;;
    --only) [ $# -ge 2 ] || die "--only needs a list"; only=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
case "$ranks" in ''|*[!0-9]*|0) [ -z "$ranks" ] || die "--ranks needs a positive integer, not '$ranks'" ;; esac
case "$iters" in ''|*[!0-9]*) die "--iters needs a non-negative integer, not '$iters'" ;; esac
case "$jobs" in ''|*[!0-9]*|0) die "--jobs needs a positive integer, not '$jobs'" ;; esac
for s in ${only//,/ }; do
  case "$s" in tests|doctor|bench|train|side|gap) ;; *) die "--only: no step '$s' (tests, doctor, bench, train, side, gap)" ;; esac
done
wants() { case ",$only," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
wants side || { anchors=""; replays=0; }
if [ -n "$anchors" ]; then
  for f in train_gpt2cu train_gpt2cu_cudnn train_gpt2.py train.bin val.bin; do
    [ -e "$anchors/$f" ] || die "--anchors: no $f in '$anchors'"
  done
fi
[ -z "$baseline" ] || [ -x "$baseline" ] || die "--baseline: '$baseline' is not a program"
[ -z "$mutants" ] || [ -f "$mutants/mutants.tsv" ] || die "--mutants: no mutants.tsv in '$mutants' (scripts/mutants.py build)"
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
step() {
  echo; echo "== [$1/7] $2 ($(($(date +%s) - start)) s so far)"
  echo "$1 at $(($(date +%s) - start)) s: $2" >>"$out/steps.txt"
}
: >"$out/steps.txt"

# summary.md, what docs/gpu-results.md records: from whatever the steps have written so far (it is
# also written when the run is stopped: timeout's TERM, Ctrl-C).
write_summary() {
set +e
{
  echo "# commscope GPU check, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo "- device: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | sort | uniq -c | sed 's/^ *//' | paste -sd ';' -)"
  grep -m3 -E "^# (cuda|nccl|CUDA|NCCL)" "$out/bench-cuda.log" | sed 's/^# /- /' || true
  echo "- steps (started at, s from the start; $(($(date +%s) - start)) s in all): $(cut -d: -f1 "$out/steps.txt" | sed 's/ at /: /' | paste -sd ',' - | sed 's/,/, /g')"
  echo "- commands: scripts/gpu-check.sh --only $only --size $size --collectives $collectives --ranks $ranks --iters $iters${anchors:+ --anchors DIR}$([ $replays = 1 ] && echo ' --replays')${mutants:+ --mutants DIR}${baseline:+ --baseline BIN} (bench: $ranks rank(s)); $(nproc) CPUs"
  echo
  if [ -s "$out/side-by-side.md" ]; then
    echo
    echo "## The training step beside llm.c and PyTorch (GPT-2 124M, T=1024, bf16; mean step after the first 3, ms)"
    echo
    cat "$out/side-by-side.md"
  fi
  if [ -s "$out/replays/ratios.md" ]; then
    echo
    echo "## Same-machine replay ratios (scripts/replay-ratios.sh, rank i on the i-th of CPUs ${high:-all}: median of 5 replays / median of 3 recordings)"
    echo
    cat "$out/replays/ratios.md"
  fi
  echo
  echo "## Training"
  echo
  grep -E "^mean step|^step +[0-9]+ " "$out/train.log" | tail -4 | sed 's/^/    /' || true
  if [ -s "$out/report/profile/iterations.csv" ]; then
    python3 - "$out/report/profile/iterations.csv" <<'PY' || true
import csv, statistics, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if int(r["step"]) >= 1 and "kernels" in r]
if rows:
    print(f"Activities a step (median over steps 1 on, mean over ranks): {statistics.median(float(r['kernels']) for r in rows):g} "
          f"kernels, memcpy and memset; {statistics.median(float(r['communications']) for r in rows):g} communications.")
PY
  fi
  if [ -s "$out/report/profile/operators.csv" ]; then
    echo
    echo "Top operators (ms over every rank and step; the per-operator profile, report/profile/operators.csv):"
    echo
    head -21 "$out/report/profile/operators.csv" | sed 's/^/    /'
  fi
  if [ -s "$out/report/profile/operator_kinds.csv" ]; then
    echo
    echo "Operators by kind, per step (the layers' of a kind summed; report/profile/operator_kinds.csv):"
    echo
    sed 's/^/    /' "$out/report/profile/operator_kinds.csv"
  fi
  if [ -s "$out/report/profile-baseline/operator_kinds.csv" ]; then
    echo
    echo "The baseline build's run beside it (--baseline): $(grep -m1 -E '^mean step' "$out/train-baseline.log")"
    echo
    python3 - "$out/report/profile-baseline/operator_kinds.csv" "$out/report/profile/operator_kinds.csv" \
      "$out/report/profile-baseline/iterations.csv" "$out/report/profile/iterations.csv" <<'PY' || true
import csv, statistics, sys
before, after = ({r["operator"]: r for r in csv.DictReader(open(p))} for p in sys.argv[1:3])
print("| operator (per step) | baseline total ms | this build total ms | ratio | baseline kernel ms | this build kernel ms |")
print("|---|---:|---:|---:|---:|---:|")
for op in sorted(set(before) | set(after), key=lambda o: -float(after.get(o, before.get(o))["total_ms"])):
    b, a = before.get(op), after.get(op)
    ratio = f"{float(a['total_ms']) / float(b['total_ms']):.3f}" if a and b and float(b["total_ms"]) > 0 else "-"
    print(f"| {op} | {b['total_ms'] if b else '-'} | {a['total_ms'] if a else '-'} | {ratio} | "
          f"{b['kernel_ms'] if b else '-'} | {a['kernel_ms'] if a else '-'} |")
for label, path in (("baseline", sys.argv[3]), ("this build", sys.argv[4])):
    rows = [r for r in csv.DictReader(open(path)) if int(r["step"]) >= 1 and "kernels" in r]
    if rows:
        print(f"\nKernels, memcpy and memset a step, {label}: {statistics.median(float(r['kernels']) for r in rows):g} (median over steps 1 on)", end="")
print()
PY
  fi
  if [ -s "$out/report/profile/components.csv" ]; then
    echo
    echo "Breakdown (ms, over every rank and step; kernel + intra-op + inter-op + communication = step):"
    echo
    sed 's/^/    /' "$out/report/profile/components.csv"
  fi
  if [ -s "$out/gpu-tests-count.txt" ]; then
    echo
    echo "## GPU tests"
    echo
    cat "$out/gpu-tests-count.txt"
    echo
    echo '```'
    grep -E "Test +#|tests passed|tests failed" "$out/gpu-tests.log" | grep -vE "^[0-9]+: " | head -60 || true
    echo '```'
  fi
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
  if [ -s "$out/mutants.md" ]; then
    echo
    echo "## Mutation checks (scripts/mutants.py: trainer.cuda.kernels with one fused kernel broken)"
    echo
    cat "$out/mutants.md"
  fi
  if [ -s "$out/doctor.log" ]; then
    echo
    echo "## GPU doctor (commscope-doctor --device cuda; each rate's share of its peak)"
    echo
    echo '```'
    grep -A40 -E '^# (gpus|peers):' "$out/doctor.log" | grep -E '^(#|  )' || tail -5 "$out/doctor.log" || true
    sed -n '/^Findings/,$p' "$out/report-doctor.txt" 2>/dev/null | head -12 || true
    echo '```'
  fi
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
  # The rows against the machine model (the device's copy rate measured at start-up; one rank's
  # NCCL rows are one copy of the array): the report's verdict lines.
  if grep -q '^Verdict' "$out/report-bench.txt" 2>/dev/null; then
    echo
    echo "Verdicts against the machine model (report-bench.txt):"
    echo
    grep '^Verdict' "$out/report-bench.txt" | head -24 | sed 's/^/    /' || true
  fi
  if [ -s "$out/report-gap.txt" ]; then
    echo
    echo "## The in-training gap (2 ranks sharing GPU 0, staged; the step against its replay alone)"
    echo
    grep -E "^The step's communication" "$out/report-gap.txt" | fold -s -w 100 | sed 's/^/    /' || true
  fi
} >"$out/summary.md"
set -e
}
trap 'echo; echo "gpu-check.sh: stopped: the summary of what ran ($out/summary.md)"; write_summary; exit 143' TERM INT

step 1 "build the CUDA configuration in $build_dir"
if [ $build = 1 ]; then
  cmake -S "$root" -B "$build_dir" -DCOMMSCOPE_CUDA=ON -DCOMMSCOPE_WERROR=ON -DCMAKE_BUILD_TYPE=Release \
    >"$out/configure.log" 2>&1 || { tail -20 "$out/configure.log"; die "configure failed (see $out/configure.log)"; }
  cmake --build "$build_dir" -j "$(nproc)" >"$out/build.log" 2>&1 ||
    { tail -30 "$out/build.log"; die "build failed (see $out/build.log)"; }
fi
bin="$build_dir/bin"
[ -x "$bin/commscope-bench" ] || die "no commscope-bench in $bin"

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
train=(--device cuda --precision bf16 --model gpt2-124m --batch $((8 * ranks)) --seq 1024 --steps 20 --log-every 1
  --peak-tflops "$peak" --data "$data")
train_rc=0
if wants train; then
step 2 "commscope-train --device cuda: GPT-2 124M in bf16, profiled, $ranks rank(s)"
launch "$ranks" "$bin/commscope-train" "${train[@]}" --profile "$out/train.h5" 2>&1 | tee "$out/train.log" || train_rc=1
fi
if wants train && [ -n "$baseline" ]; then  # the same run by the earlier build
  launch "$ranks" "$baseline" "${train[@]}" --profile "$out/train-baseline.h5" >"$out/train-baseline.log" 2>&1 ||
    train_rc=1
  grep -E "^mean step" "$out/train-baseline.log" | sed 's/^/baseline build: /' || true
fi

step 3 "$([ -n "$anchors" ] && echo "the training step beside llm.c and PyTorch ($anchors)" || echo "no --anchors: no side-by-side table"); $([ $replays = 1 ] && echo "the replay ratios" || echo "no --replays")"
# The replays take the upper half of the cores in the background, one CPU each (a core's other
# hardware thread left idle); the GPU runs take the lower half's CPUs, every thread.
read -r low high < <(lscpu -p=CPU,CORE 2>/dev/null | grep -v '^#' | sort -t, -k2,2n -k1,1n | awk -F, '
  { cpu[NR] = $1; core[NR] = $2; if (!($2 in seen)) { seen[$2] = 1; cores[++n] = $2 } }
  END { half = int(n / 2); for (i = 1; i <= n; ++i) rank[cores[i]] = i
        for (i = 1; i <= NR; ++i) if (rank[core[i]] <= half) low = low "," cpu[i]; else if (!(core[i] in took)) { took[core[i]] = 1; high = high "," cpu[i] }
        print substr(low, 2), substr(high, 2) }')
# With fewer than 8 cores in the upper half (the largest layout's ranks), the replays wait for
# the GPU runs and then take every core.
replays_pid=""
run_replays() { bash "$root/scripts/replay-ratios.sh" --bin "$bin" --out "$out/replays" "$@" >"$out/replays.log" 2>&1; }
together=0
[ $replays = 1 ] && [ "$(echo "$high" | tr ',' '\n' | grep -c .)" -ge 8 ] && together=1
if [ $together = 1 ]; then
  run_replays --cpus "$high" &
  replays_pid=$!
else
  high=""
fi
side_rc=0
# mean_step LOG: the mean of the "NNN.NN ms" of a trainer's step lines after the first 3 (llm.c's
# and PyTorch's print one per step; torch.compile's first steps compile), or commscope-train's
# own "mean step" figure (after its first step).
mean_step() {
  python3 - "$1" <<'PY'
import re, statistics, sys
text = open(sys.argv[1], errors="replace").read()
m = re.search(r"^mean step ([0-9.]+) ms", text, re.M)
if m:
    print(m.group(1)); sys.exit()
steps = [float(x) for x in re.findall(r"^step +\d+/\d+ \|.*?\(?([0-9.]+) ms", text, re.M)]
print(f"{statistics.mean(steps[3:]):.2f}" if len(steps) > 3 else "-")
PY
}
if [ -n "$anchors" ]; then
  pin=(taskset -c "$low")
  command -v taskset >/dev/null && [ -n "$low" ] && [ $together = 1 ] || pin=()
  side="$out/side"
  mkdir -p "$side"
  for b in 8 32; do
    n=$([ $b = 8 ] && echo 30 || echo 15)
    for att in flash cudnn baseline; do
      trainer=$bin/commscope-train
      [ $att != baseline ] || { [ -n "$baseline" ] || continue; trainer=$baseline; }
      timeout 180 "${pin[@]}" "$trainer" --device cuda --precision bf16 --model gpt2-124m --batch $b \
        --seq 1024 --steps $n --attention "${att/baseline/flash}" --peak-tflops "$peak" --data "$anchors/train.bin" --val-fraction 0.05 --val-batches 1 \
        >"$side/commscope-$att-b$b.log" 2>&1 || side_rc=1
    done
    for v in train_gpt2cu_cudnn train_gpt2cu; do
      (cd "$anchors" && timeout 120 "${pin[@]}" "./$v" -i train.bin -j val.bin -e d12 -b $b -t 1024 -x $n -v 100000 \
        -s 100000 -h 0) >"$side/$v-b$b.log" 2>&1 || side_rc=1
    done
    # PyTorch with the machine's own libraries, not the packed build's.
    (cd "$side" && LD_LIBRARY_PATH=${COMMSCOPE_ORIGINAL_LD_LIBRARY_PATH-${LD_LIBRARY_PATH:-}} PYTHONUNBUFFERED=1 \
      timeout 300 "${pin[@]}" python3 "$anchors/train_gpt2.py" --input_bin "$anchors/train.bin" --model d12 \
      --batch_size $b --sequence_length 1024 --total_batch_size $((b * 1024)) --num_iterations $n --compile 1 \
      --flash 1 --dtype bfloat16 --tensorcores 1 --write_tensors 0 --overfit_single_batch 0 --device cuda) \
      >"$side/pytorch-b$b.log" 2>&1 || side_rc=1
  done
  {
    echo "| trainer | B=8 step ms | B=32 step ms | B=8 / llm.c cuDNN | B=32 / llm.c cuDNN |"
    echo "|---|---:|---:|---:|---:|"
    ref8=$(mean_step "$side/train_gpt2cu_cudnn-b8.log") ref32=$(mean_step "$side/train_gpt2cu_cudnn-b32.log")
    rows=(commscope-flash:"commscope-train, our flash attention" commscope-cudnn:"commscope-train, cuDNN attention")
    [ -z "$baseline" ] || rows+=(commscope-baseline:"commscope-train, the baseline build, our flash attention")
    rows+=(train_gpt2cu_cudnn:"llm.c, cuDNN attention" train_gpt2cu:"llm.c, its own attention"
      pytorch:"PyTorch (llm.c's train_gpt2.py), torch.compile, flash SDPA")
    for t in "${rows[@]}"; do
      s8=$(mean_step "$side/${t%%:*}-b8.log") s32=$(mean_step "$side/${t%%:*}-b32.log")
      r8=$(python3 -c "print(f'{$s8 / $ref8:.3f}')" 2>/dev/null || echo -)
      r32=$(python3 -c "print(f'{$s32 / $ref32:.3f}')" 2>/dev/null || echo -)
      echo "| ${t#*:} | $s8 | $s32 | $r8 | $r32 |"
    done
  } >"$out/side-by-side.md"
  cat "$out/side-by-side.md"
fi
replays_rc=0
if [ -n "$replays_pid" ]; then
  wait "$replays_pid" || replays_rc=1
elif [ $replays = 1 ]; then
  run_replays || replays_rc=1
fi
[ $replays = 0 ] || tail -12 "$out/replays.log"

# Tests labelled gpu4 need four GPUs (one per rank): left out on fewer, where they could only skip.
exclude=()
[ "$ngpu" -ge 4 ] || exclude=(-LE gpu4)
gpu_tests=0
if wants tests; then
step 4 "the gpu tests (ctest -L gpu${exclude[*]:+ ${exclude[*]}})"
# -V: every test's output in the log, each line after its test's number, so that the measured
# errors and times behind the verdicts come from these runs (no test runs twice); the console
# shows the verdicts.
(cd "$build_dir" && ctest -L gpu "${exclude[@]}" -j "$jobs" -V) >"$out/gpu-tests.log" 2>&1 || gpu_tests=1
grep -E "Test +#|tests passed|tests failed" "$out/gpu-tests.log" | grep -vE "^[0-9]+: " || true
count_tests "$out/gpu-tests.log" | tee "$out/gpu-tests-count.txt" || gpu_tests=1
test_output() {  # test_output NAME: that test's lines of the log, without their number
  local n
  n=$(grep -oE "Test +#[0-9]+: $1 " "$out/gpu-tests.log" | grep -oE "[0-9]+" | head -1)
  [ -z "$n" ] || grep -E "^$n: " "$out/gpu-tests.log" | sed "s/^$n: //" | awk '
    /^(Test command|Working Directory|Test timeout computed)/ { next }
    /^Environment variables:/ { env = 1; next }
    env && /^ / { next }
    { env = 0; print }'
}
test_output trainer.cuda.kernels >"$out/test_trainer_cuda_kernels.log"
test_output profiler.cuda.known_durations >"$out/test_profiler_cupti_known_durations.log"
test_output trainer.cuda.equivalence.np1 >"$out/test_trainer_cuda.log"
if [ -n "$mutants" ]; then
  python3 "$root/scripts/mutants.py" run --dir "$mutants" --jobs 4 --out "$out/mutants.md" || gpu_tests=1
  cat "$out/mutants.md" 2>/dev/null || true
fi
fi

doctor_rc=0
if wants doctor; then
step 5 "commscope-doctor --device cuda: every GPU against its peaks, the peer copies"
launch "$(command -v mpirun >/dev/null && echo "$ngpu" || echo 1)" "$bin/commscope-doctor" --device cuda --passes 1 --no-nodes -o "$out/doctor.h5" >"$out/doctor.log" 2>&1 &&
  "$bin/commscope-report" doctor "$out/doctor.h5" >"$out/report-doctor.txt" 2>&1 || doctor_rc=1
grep -A40 -E '^# (gpus|peers):' "$out/doctor.log" | grep -E '^(#|  )' || tail -5 "$out/doctor.log" || true
fi

bench_rc=0
if wants bench; then
step 6 "commscope-bench on device buffers: $collectives, NCCL and our algorithms, 8 B to $size, $ranks ranks"
launch "$ranks" "$bin/commscope-bench" "$collectives" --device cuda --algo all -b 8 -e "$size" -f 4 -c 1 -n "$iters" --stats \
  --out "$out/bench-cuda.h5" 2>&1 | tee "$out/bench-cuda.log" || bench_rc=1
fi

step 7 "reports"
report_rc=0
[ ! -s "$out/bench-cuda.h5" ] || "$bin/commscope-report" bench "$out/bench-cuda.h5" -o "$out/report/bench" \
  >"$out/report-bench.txt" 2>&1 || report_rc=1
[ ! -s "$out/train.h5" ] || "$bin/commscope-report" profile "$out/train.h5" -o "$out/report/profile" \
  >"$out/report-profile.txt" 2>&1 || report_rc=1
[ ! -s "$out/train-baseline.h5" ] || "$bin/commscope-report" profile "$out/train-baseline.h5" \
  -o "$out/report/profile-baseline" >"$out/report-profile-baseline.txt" 2>&1 || report_rc=1
# The in-training gap on the GPU (docs/report.md, "Communication in the step"): 2 ranks sharing
# GPU 0 (--transport staged), GPT-2 124M with its gradients' allreduce overlapping the backward's
# kernels, the machine model measured at start-up (--machine-probe); its replay without the
# compute (--gaps none) is each call alone, and the report sets every call against it: contention
# is the transfer beyond alone of the calls the rank's own kernels overlapped.
gap_rc=0
if wants gap && command -v mpirun >/dev/null; then
  mpirun -np 2 --bind-to none -x CUDA_VISIBLE_DEVICES=0 "$bin/commscope-train" --device cuda --precision bf16 \
    --model gpt2-124m --batch 8 --seq 1024 --steps 10 --transport staged --machine-probe --data "$data" \
    --profile "$out/gap-train.h5" >"$out/gap-train.log" 2>&1 &&
    mpirun -np 2 --bind-to none -x CUDA_VISIBLE_DEVICES=0 "$bin/commscope-replay" "$out/gap-train.h5" --device cuda \
      --gaps none -o "$out/gap-replay.h5" >"$out/gap-replay.log" 2>&1 &&
    "$bin/commscope-report" profile "$out/gap-train.h5" --alone "$out/gap-replay.h5" -o "$out/report/gap" \
      >"$out/report-gap.txt" 2>&1 || gap_rc=1
fi

write_summary

echo
cat "$out/summary.md"
echo
echo "gpu-check.sh: results in $out (summary.md, logs, HDF5 files, report/)"
status=$((gpu_tests | doctor_rc | bench_rc | train_rc | side_rc | replays_rc | report_rc | gap_rc))
[ $status = 0 ] || echo "gpu-check.sh: some steps failed: gpu tests $gpu_tests, doctor $doctor_rc, bench $bench_rc, train $train_rc, side by side $side_rc, replays $replays_rc, reports $report_rc, in-training gap $gap_rc"
exit $status
