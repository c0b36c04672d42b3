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
# As the tests' own environment (cmake/CommscopeTesting.cmake) for those that launch mpirun
# without it: Open MPI's ob1, which it picks here anyway, without loading the other transports.
export OMPI_MCA_pml=${OMPI_MCA_pml:-ob1}
cd "$root/build"
# Two test slots: a test holds as many as it declares (PROCESSORS: an MPI test of 2 ranks or more
# both, so it runs alone), the single-process tests two at a time, an MPI test whose ranks mostly
# wait (label waits: a timeout, a hang, a stop) beside one of them, and those whose timing is the
# check run alone (RUN_SERIAL). CTEST_PARALLEL_LEVEL overrides the 2.
ctest --output-on-failure -j "${CTEST_PARALLEL_LEVEL:-2}" "$@"
