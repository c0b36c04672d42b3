# Sourced by the tests that make an emulated cluster of their own (label cluster):
#   own_cluster PREFIX UP-ARGS...
# removes a cluster PREFIX that a killed run left, makes it (scripts/emulate-cluster.sh up
# UP-ARGS... --prefix PREFIX) and removes it when the test's shell exits; exits 77 where no cluster
# can be made here, 1 (saying so, after the caller's $me) where making it failed. $emulate is the
# script, for the test's own calls.
emulate=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/scripts/emulate-cluster.sh
own_cluster() {
  local prefix=$1 rc
  shift
  # shellcheck disable=SC2064  # the prefix is fixed now
  trap "\"$emulate\" down --prefix \"$prefix\" >/dev/null 2>&1" EXIT
  "$emulate" down --prefix "$prefix" >/dev/null 2>&1
  "$emulate" up "$@" --prefix "$prefix"
  rc=$?
  [ $rc = 77 ] && exit 77
  [ $rc = 0 ] || { echo "${me:-own_cluster}: FAIL: no cluster (emulate-cluster.sh up: exit $rc)"; exit 1; }
}
