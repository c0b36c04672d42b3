#!/usr/bin/env bash
# Install what is missing, build, and run the suite on localhost ranks.
# For now the suite is the collectives demo: a correctness pass of every collective and
# algorithm, then each algorithm's allreduce bandwidth beside memcpy. It grows with the
# bench, trainer and report.
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

echo "== correctness: every collective x algorithm x type x op on $ranks ranks"
"${launch[@]}" "$bin/test_collectives_correctness" --quick
for coll in allreduce allgather reducescatter broadcast; do
  echo "== $coll, $size, $ranks ranks"
  "${launch[@]}" "$bin/commscope-quickbench" -c "$coll" -s "$size" -n $([ $quick = 1 ] && echo 3 || echo 20)
done
