#!/usr/bin/env bash
# instances.sh PYTHON PROFILE -- COMMAND...: COMMAND (a profiled commscope-train run writing
# PROFILE) runs, then instance_matching.py checks that its profile matches each communication only
# among its own ranks. PYTHON: a python3 with h5py, or "none" (exit 77: skipped).
set -u
python=$1 profile=$2
shift 2
[ "$1" = "--" ] && shift
[ "$python" != none ] || { echo "no python3 with h5py (Debian: python3-h5py): skipped"; exit 77; }
"$@" > /dev/null || { echo "instances.sh: FAIL: the run exited with status $?"; exit 1; }
"$python" "$(dirname "$0")/instance_matching.py" "$profile"
