#!/usr/bin/env bash
# run-alone.sh CTEST BUILD_DIR READER=WRITER...: each READER test, selected alone (ctest -R
# '^READER$'), also selects WRITER, the test that writes the file READER reads: WRITER is a ctest
# fixture READER requires. (With DEPENDS alone ctest -R READER or ctest -L unit ran the reader
# without its writer, and it failed on a missing file.) Exit 0, or 1 naming each reader alone.
set -u
ctest=$1 build=$2
shift 2
bad=0
for pair in "$@"; do
  reader=${pair%%=*} writer=${pair#*=}
  listed=$("$ctest" --test-dir "$build" -N -R "^${reader//./\\.}\$") || { echo "run-alone.sh: FAIL: ctest -N failed"; exit 1; }
  if ! printf '%s\n' "$listed" | grep -q "Test *#[0-9]*: ${reader//./\\.}\$"; then
    echo "run-alone.sh: FAIL: no test $reader"
    bad=1
  elif printf '%s\n' "$listed" | grep -q "Test *#[0-9]*: ${writer//./\\.}\$"; then
    echo "$reader: runs $writer first"
  else
    echo "run-alone.sh: FAIL: ctest -R $reader runs it without $writer, which writes what it reads"
    bad=1
  fi
done
exit $bad
