#!/usr/bin/env bash
# fixtures_stale.sh FIXTURES_SH BINDIR FIXTURES DIR MPIEXEC: a copy of FIXTURES in DIR with
# bench-np1.h5 replaced by an old file that is not HDF5 (an earlier schema): FIXTURES_SH makes that
# one again and keeps the other 8, and the new one is HDF5.
set -u
fixtures_sh=$1 bindir=$2 fx=$3 d=$4 mpiexec=$5
rm -rf "$d"
mkdir -p "$d"
cp -p "$fx"/*.h5 "$d/"
echo stale > "$d/bench-np1.h5"
touch -d 2000-01-01 "$d/bench-np1.h5"
out=$("$fixtures_sh" "$bindir" "$d" "$mpiexec") || { echo "fixtures_stale.sh: FAIL: fixtures.sh exited with status $?"; exit 1; }
echo "$out"
[ "$out" = "fixtures.sh: 1 made, 8 kept, in $d" ] || { echo "fixtures_stale.sh: FAIL: not 1 made and 8 kept"; exit 1; }
h5dump -H "$d/bench-np1.h5" > /dev/null || { echo "fixtures_stale.sh: FAIL: the new bench-np1.h5 is not HDF5"; exit 1; }
