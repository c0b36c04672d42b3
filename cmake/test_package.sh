#!/usr/bin/env bash
# Install the build tree into a scratch prefix, build cmake/consumer against it with
# find_package(commscope), and run it on 2 ranks.
#   test_package.sh BUILD_DIR SOURCE_DIR MPIEXEC
set -euo pipefail
build=$1 src=$2 mpiexec=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$src/cmake/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/consumer" >/dev/null
"$mpiexec" -np 2 --oversubscribe "$work/consumer/consumer"
