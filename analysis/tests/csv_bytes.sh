#!/usr/bin/env bash
# csv_bytes.sh DIR: a bench report's sizes are numbers of bytes in its CSV files (size_bytes,
# from_bytes, to_bytes; the first size 8) and text ("8 B") in report.md.
set -u
dir=$1
fail() { echo "csv_bytes.sh: FAIL: $*"; exit 1; }
head -n 2 "$dir/allreduce.csv" | tr -d '\r' | tee /dev/stderr | grep -Eq '^8,' || fail "allreduce.csv's first size is not 8"
head -n 1 "$dir/allreduce.csv" | grep -q '^size_bytes,' || fail "allreduce.csv has no size_bytes column"
head -n 1 "$dir/fits.csv" | grep -q ',from_bytes,to_bytes,' || fail "fits.csv has no from_bytes, to_bytes columns"
grep -q '| *8 B |' "$dir/report.md" || fail "report.md does not show 8 B"
