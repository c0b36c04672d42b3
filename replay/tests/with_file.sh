#!/usr/bin/env bash
# with_file.sh FILE -- COMMAND...: runs COMMAND where FILE exists, else says so and exits 77 (a
# skip in ctest): the tests on the shared PyTorch traces, which a clone without ../shared lacks.
[ -f "$1" ] || { echo "skipped: no $1 (PyTorch profiler traces: the shared data folder beside the checkout, ../shared/data/kineto, not in the repository; docs/profiler.md, 'The traces the tests read', says which traces and how torch.profiler writes such files)"; exit 77; }
shift
[ "$1" = "--" ] && shift
exec "$@"
