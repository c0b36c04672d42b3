#!/usr/bin/env bash
# Run a test only where a GPU is (or is not) usable; otherwise exit 77, which ctest reports
# as skipped, with the reason.
#   gpu.sh need [N]|absent -- command...     (need N: at least N GPUs; default 1)
set -u
mode=$1
shift
want=1
if [ "$mode" = need ] && [ "${1:-}" != "--" ]; then want=$1; shift; fi
[ "$1" = "--" ] && shift
have=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
if [ "$mode" = need ] && [ "$have" = 0 ]; then
  echo "skipped: no NVIDIA GPU is usable here (nvidia-smi -L lists none)"; exit 77
fi
if [ "$mode" = need ] && [ "$have" -lt "$want" ]; then
  echo "skipped: needs $want GPUs (one per rank), this machine has $have"; exit 77
fi
if [ "$mode" = absent ] && [ "$have" != 0 ]; then
  echo "skipped: a GPU is present; this test checks the behaviour without one"; exit 77
fi
exec "$@"
