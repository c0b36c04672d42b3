#!/usr/bin/env bash
# Install what the build needs (Debian packages only), configure and build into build/.
# Idempotent: packages already present are not reinstalled, and the build is incremental.
#
#   scripts/setup.sh [--build-dir DIR] [--no-install] [-- extra cmake arguments]
# Environment: COMMSCOPE_BUILD_TYPE (Release), COMMSCOPE_CUDA (AUTO|ON|OFF), JOBS (nproc).
set -euo pipefail

# --help: this file's opening comment, up to the first line of code, without the '# '.
usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir="$root/build"
install=1
cmake_extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir=$2; shift 2 ;;
    --no-install) install=0; shift ;;
    --) shift; cmake_extra=("$@"); break ;;
    -h|--help) usage; exit 0 ;;
    *) echo "setup.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

# Debian packages the build and the suite use (bible-kjv: the trainer's default corpus, see
# scripts/get-corpus.sh; python3-h5py: scripts/check-report.py; protobuf-compiler: the Chakra
# tests' judge of the bytes, profiler/tests/chakra_protoc.sh).
packages=(build-essential cmake pkg-config openmpi-bin libopenmpi-dev libhdf5-dev hdf5-tools libcli11-dev python3
          python3-h5py          libbenchmark-dev libgtest-dev libopenblas-dev gnuplot-nox bible-kjv protobuf-compiler)

if [ "$install" = 1 ]; then
  missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" != 0 ]; then
      echo "setup.sh: missing Debian packages: ${missing[*]}; run as root or install them with apt-get" >&2
      exit 1
    fi
    echo "setup.sh: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi

jobs=${JOBS:-$(nproc)}
# A new build folder compiles in batches (COMMSCOPE_UNITY: a first build in less time); one built
# before keeps what it has, file by file for a working tree rebuilt often.
first=()
[ -f "$build_dir/CMakeCache.txt" ] || first=(-DCOMMSCOPE_UNITY=ON)
cmake -S "$root" -B "$build_dir" \
  -DCMAKE_BUILD_TYPE="${COMMSCOPE_BUILD_TYPE:-Release}" \
  -DCOMMSCOPE_CUDA="${COMMSCOPE_CUDA:-AUTO}" \
  "${first[@]}" "${cmake_extra[@]}"
cmake --build "$build_dir" -j "$jobs"
echo "setup.sh: built into $build_dir (binaries in $build_dir/bin)"
# The trainer's default corpus (data/kjv.txt), when the bible program is there.
if command -v bible >/dev/null 2>&1; then "$root/scripts/get-corpus.sh" >/dev/null; fi
