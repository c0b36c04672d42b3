#!/usr/bin/env bash
# doctor_report_np3.sh REPORT FILE: commscope-doctor's file of 3 ranks on one host (3 rounds x 2
# passes x 2 directions = 12 pair rows) read back by `REPORT doctor`: the pairs from host buffers
# over MPI (a --device cpu run's), the run said complete.
set -u
"$1" doctor "$2" | tee /dev/stderr | grep -q '^3 ranks on 1 hosts .*\. Pairs from host buffers, MPI\. .* Run complete\.$' ||
  { echo "doctor_report_np3.sh: FAIL: the report does not say 3 ranks on 1 host, pairs from host buffers, run complete"; exit 1; }
h5dump -H -d /pairs "$2" | grep -q 'SIMPLE { ( 12 )' || { echo "doctor_report_np3.sh: FAIL: /pairs has not 12 rows"; exit 1; }
