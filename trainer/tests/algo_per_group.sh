#!/usr/bin/env bash
# algo_per_group.sh TRAIN DATA DIR -- LAUNCHER...: per-group algorithms on (tp, pp) = (2, 2): the
# TP group's allreduces over shm, the DP group's over ring, the embedding group's over tree, as the
# startup line and the profile's attributes say; the loss at step 2 equals the one-algorithm
# run's (the same sums in a different order: to the 4 decimals printed). LAUNCHER N COMMAND runs
# COMMAND on N ranks.
set -u
train=$1 data=$2 d=$3
shift 3
[ "$1" = "--" ] && shift
fail() { echo "algo_per_group.sh: FAIL: $*"; exit 1; }
run=(--model tiny --tp 2 --pp 2 --data "$data" --steps 2 --batch 2 --threads 1)
"$@" 4 "$train" "${run[@]}" --algo tp=shm,dp=ring,embedding=tree --profile "$d/algo.h5" > "$d/algo.log" ||
  fail "the per-group run exited with status $?"
"$@" 4 "$train" "${run[@]}" > "$d/algo-mpi.log" || fail "the mpi run exited with status $?"
grep -q 'allreduces (shm)' "$d/algo.log" || fail "the startup line names no 'allreduces (shm)'"
h5dump -a /meta/attributes/tp_algo "$d/algo.h5" | grep -q '"shm"' || fail "the profile's tp_algo is not shm"
h5dump -a /meta/attributes/embedding_algo "$d/algo.h5" | grep -q '"tree"' || fail "the profile's embedding_algo is not tree"
a=$(grep -o 'step *2/2 | loss [0-9.]*' "$d/algo.log")
b=$(grep -o 'step *2/2 | loss [0-9.]*' "$d/algo-mpi.log")
echo "$a / $b"
[ -n "$a" ] || fail "no step 2 loss"
[ "$a" = "$b" ] || fail "the losses differ"
