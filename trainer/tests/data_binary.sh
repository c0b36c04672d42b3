#!/usr/bin/env bash
# data_binary.sh FILE ONE_LINE_ERROR TRAIN: --data naming a binary file that is not a token shard
# (FILE, written here with an HDF5 file's first bytes): one line and exit 2 before any training
# (ONE_LINE_ERROR: analysis/tests/one_line_error.sh).
set -u
file=$1 one_line_error=$2 train=$3
printf '\211HDF\r\n\032\n\0\0\0\0' > "$file" || { echo "data_binary.sh: FAIL: cannot write $file"; exit 1; }
exec "$one_line_error" "^commscope-train: .*/$(basename "$file"): is an HDF5 file, not text .* nor an llm.c token shard" \
  -- "$train" --model tiny --steps 1 --data "$file"
