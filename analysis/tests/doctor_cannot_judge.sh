#!/usr/bin/env bash
# doctor_cannot_judge.sh REPORT DOCTOR_FILE: a doctor file of 2 ranks on one host (1 link, 2
# probes, 1 node: fewer than the 3 values the rule needs of every kind) is reported as one that
# cannot be judged, and why.
set -u
out=$("$1" doctor "$2") || { echo "doctor_cannot_judge.sh: FAIL: the report exited with status $?"; exit 1; }
printf '%s\n' "$out" |
  grep -qF "fewer than 3 values to tell an odd one from its peers: links (1), ranks' probes (2), nodes' allreduce (1)." ||
  { echo "doctor_cannot_judge.sh: FAIL: the values per kind are not said"; exit 1; }
printf '%s\n' "$out" | grep -q '^cannot judge: no kind of value has the 3 or more' ||
  { echo "doctor_cannot_judge.sh: FAIL: no 'cannot judge' line"; exit 1; }
