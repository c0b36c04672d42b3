#!/usr/bin/env bash
# late_rank0.sh SECONDS COMMAND...: runs COMMAND, on the launcher's rank 0 SECONDS later than on
# the others (a rank 0 slowed by a busy machine).
delay=$1
shift
[ "${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-0}}" = 0 ] && sleep "$delay"
exec "$@"
