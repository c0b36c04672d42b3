#!/usr/bin/env bash
# Set up (install what is missing, build with warnings as errors), then run the whole ctest
# suite. Tests labelled `gpu` skip with a reason where no GPU is present.
#
#   scripts/test.sh [ctest arguments, e.g. -L unit or -R correctness]
set -euo pipefail

case "${1:-}" in
  -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"; exit 0 ;;
esac

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup.sh" -- -DCOMMSCOPE_WERROR=ON
# Open MPI refuses to run as root without these; the MPI tests launch real mpirun.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "$root/build"
ctest --output-on-failure "$@"
