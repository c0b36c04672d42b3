#!/usr/bin/env bash
# pp_cli.sh TRAIN REPORT TRACE DATA DIR -- LAUNCHER...: pipeline parallelism through the command
# line. A checkpoint saved at (dp, tp, pp) = (1, 1, 2) holds the whole model (read back at one rank
# and saved as llm.c, it equals the one saved at pp 2); the profile of the run names its pipeline
# communication per group and the stages' waits, and its trace names each rank's stage and each
# communication's group. LAUNCHER N COMMAND runs COMMAND on N ranks.
set -u
train=$1 report=$2 trace=$3 data=$4 d=$5
shift 5
[ "$1" = "--" ] && shift
fail() { echo "pp_cli.sh: FAIL: $*"; exit 1; }
"$@" 2 "$train" --model tiny --pp 2 --micro-batches 2 --data "$data" --steps 3 --batch 4 --threads 1 \
  --save "$d/pp.ckpt" --save-llmc "$d/pp2.bin" --profile "$d/pp.h5" > "$d/pp.log" || fail "the pp 2 run exited with status $?"
cat "$d/pp.log"
grep -q 'stage 1: layers 1-1, head' "$d/pp.log" || fail "no 'stage 1: layers 1-1, head' in the run's output"
"$train" --load "$d/pp.ckpt" --data "$data" --steps 0 --threads 1 --save-llmc "$d/pp1.bin" ||
  fail "reading the checkpoint on one rank exited with status $?"
cmp "$d/pp1.bin" "$d/pp2.bin" || fail "the models saved at pp 1 and pp 2 differ"
"$report" profile "$d/pp.h5" > "$d/pp-report.txt" || fail "the profile report exited with status $?"
grep -E '^pp \(pipeline\) +pp.recv +2 ' "$d/pp-report.txt" || fail "no pp.recv row of the pipeline group"
grep -E '^embedding .* embedding.allreduce +1 ' "$d/pp-report.txt" || fail "no embedding.allreduce row"
grep -E '^ +1 +1-1 .* 33.33%$' "$d/pp-report.txt" || fail "no wait row of stage 1"
"$trace" "$d/pp.h5" -o "$d/pp.json" || fail "the trace exited with status $?"
grep -q 'stage 1, tp 0, dp 0' "$d/pp.json" || fail "the trace names no 'stage 1, tp 0, dp 0'"
grep -q '"group":"pp"' "$d/pp.json" || fail "the trace names no communication of group pp"
