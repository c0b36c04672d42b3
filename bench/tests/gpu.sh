#!/usr/bin/env bash
# Run a test only where a GPU is (or is not) usable; otherwise exit 77, which ctest reports
# as skipped, with the reason.
#   gpu.sh need|absent -- command...
set -u
mode=$1
shift
[ "$1" = "--" ] && shift
if nvidia-smi -L >/dev/null 2>&1; then have=1; else have=0; fi
if [ "$mode" = need ] && [ $have = 0 ]; then
  echo "skipped: no NVIDIA GPU is usable here (nvidia-smi -L failed)"; exit 77
fi
if [ "$mode" = absent ] && [ $have = 1 ]; then
  echo "skipped: a GPU is present; this test checks the behaviour without one"; exit 77
fi
exec "$@"
