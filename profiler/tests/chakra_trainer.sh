#!/usr/bin/env bash
# chakra_trainer.sh EXPORT_EXE IMPORT_EXE COMPARE_EXE WORKDIR -- MPIRUN... TRAIN_EXE ARGS...
#
# A Chakra round trip of the trainer's own profile: the run (under mpirun) writes WORKDIR/p.h5,
# commscope-export chakra writes WORKDIR/p.N.et, commscope-import chakra reads them back, and
# test_chakra_compare finds each rank's communication the same (name, bytes, communicator,
# instance, step, in order).
set -euo pipefail
export=$1 import=$2 compare=$3 work=$4
shift 4
[ "$1" = "--" ] && shift
rm -rf "$work"
mkdir -p "$work"
"$@" --profile "$work/p.h5" >"$work/train.log"
"$export" chakra "$work/p.h5" -o "$work/p"
"$import" chakra "$work/p" -o "$work/back.h5" >/dev/null
"$compare" "$work/p.h5" "$work/back.h5"
