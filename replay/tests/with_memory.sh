#!/usr/bin/env bash
# with_memory.sh GIB -- COMMAND...: runs COMMAND where the machine has GIB GiB of memory available
# (MemAvailable), else says so and exits 77 (a skip in ctest).
need=$1
shift
[ "$1" = "--" ] && shift
kib=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo 2>/dev/null)
if [ -z "$kib" ] || [ "$kib" -lt $((need * 1024 * 1024)) ]; then
  echo "skipped: ${kib:-unknown} KiB of memory available, the test needs $need GiB"
  exit 77
fi
exec "$@"
