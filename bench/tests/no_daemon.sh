#!/usr/bin/env bash
# Run a command where Open MPI's daemon (orted) cannot be executed, as on a GPU node or in a
# container that has the MPI libraries but not the launcher: one rank started without mpirun
# must still work (commscope starts MPI as an isolated singleton). The daemon is hidden by
# bind-mounting /dev/null over it in a private mount namespace; without root or mount
# namespaces the test is skipped (exit 77).
#   no_daemon.sh -- command...
set -u
[ "${1:-}" = "--" ] && shift
orted=$(command -v orted) || { echo "skipped: no orted on PATH (not Open MPI?)"; exit 77; }
unshare -m true 2>/dev/null || { echo "skipped: cannot create a mount namespace (needs root)"; exit 77; }
exec unshare -m sh -c 'mount --bind /dev/null "$0" || exit 77; shift; exec "$@"' "$orted" -- "$@"
