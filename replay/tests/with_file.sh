#!/usr/bin/env bash
# with_file.sh FILE -- COMMAND...: runs COMMAND where FILE exists, else says so and exits 77 (a
# skip in ctest): the tests on the shared PyTorch traces, which a clone without ../shared lacks.
[ -f "$1" ] || { echo "no $1: skipped (the shared Kineto traces are not here)"; exit 77; }
shift
[ "$1" = "--" ] && shift
exec "$@"
