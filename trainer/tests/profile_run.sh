#!/usr/bin/env bash
# profile_run.sh CHECK PROFILE ITERATIONS RANKS -- COMMAND...: runs the (profiled) trainer, then
# checks its profile with test_trainer_profile_check.
set -euo pipefail
check=$1 profile=$2 iterations=$3 ranks=$4
shift 5
rm -f "$profile"
"$@"
"$check" "$profile" "$iterations" "$ranks"
