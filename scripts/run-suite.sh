#!/usr/bin/env bash
# Install what is missing, build, and run the suite on localhost ranks.
# For now the suite is commscope-bench over every collective and algorithm (checked, results
# in results/bench-*.h5), then the local reduction loops beside memcpy. It grows with the
# trainer and the report.
#
#   scripts/run-suite.sh [--ranks N] [--size BYTES] [--quick]
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ranks=$(nproc)
[ "$ranks" -ge 2 ] || ranks=2
size=64M
quick=0
while [ $# -gt 0 ]; do
  case "$1" in
    --ranks) ranks=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --quick) quick=1; size=1M; shift ;;
    -h|--help) sed -n '2,8p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "run-suite.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case "$ranks" in ''|*[!0-9]*|0) echo "run-suite.sh: --ranks needs a positive integer" >&2; exit 2 ;; esac

"$root/scripts/setup.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
launch=(mpirun -np "$ranks" --oversubscribe --bind-to none)
bin="$root/build/bin"

iters=$([ $quick = 1 ] && echo 5 || echo 20)
mkdir -p "$root/results"
out="$root/results/bench-np$ranks-$(date +%Y%m%d-%H%M%S).h5"
echo "== commscope-bench: every collective and algorithm, 8 B to $size, $ranks ranks"
"${launch[@]}" "$bin/commscope-bench" all --algo all -b 8 -e "$size" -f 4 -n "$iters" --out "$out"
echo "== commscope-microbench: local reduction loops beside memcpy"
"$bin/commscope-microbench" --benchmark_filter='memcpy|reduce/(f32|bf16|i32)/sum' \
  --benchmark_min_time=$([ $quick = 1 ] && echo 0.01 || echo 0.2)
echo "== results: $out"
