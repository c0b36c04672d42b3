#!/usr/bin/env bash
# doctor_gpu.sh REPORT FILE -- DOCTOR-COMMAND...: commscope-doctor --device cuda on this machine's
# GPUs: it ends well, prints a row per GPU with each rate's share of its peak, every share
# between 0.2 and 1.1 (a probe that times the wrong thing, or a peak of the wrong table row,
# falls outside), writes /gpus, and `REPORT doctor FILE` shows the GPUs' table.
set -u
report=$1 file=$2
shift 2
[ "$1" = "--" ] && shift
out=$("$@" -o "$file" 2>&1)
rc=$?
printf '%s\n' "$out"
fail() { echo "doctor_gpu.sh: FAIL: $*"; exit 1; }
[ $rc = 0 ] || fail "the doctor ended with status $rc"
printf '%s\n' "$out" | grep -q '^# gpus: ' || fail "no '# gpus:' line"
rows=$(printf '%s\n' "$out" | grep -cE '^ +rank +[0-9]+ .* GPU [0-9]+ .*: bf16 GEMM ' || true)
[ "$rows" -gt 0 ] || fail "no GPU row"
printf '%s\n' "$out" | grep -q 'ABOVE its peak' && fail "a rate above its peak"
# Every "(X of peak" share of the GPU rows; at least the device copy's in each row (its peak, from
# the bus width and memory clock, is known on every GPU; a GEMM's only for the table's
# architectures, the host link's where nvidia-smi or sysfs says it).
shares=$(printf '%s\n' "$out" | grep -E ' GPU [0-9]+ .*: bf16 GEMM ' | grep -oE '\([0-9.]+ of peak' | tr -d '(' |
  awk '{print $1}')
[ "$(printf '%s\n' "$shares" | grep -c .)" -ge "$rows" ] || fail "a GPU row without its device copy's share of its peak"
for s in $shares; do
  awk -v s="$s" 'BEGIN { exit !(s >= 0.2 && s <= 1.1) }' || fail "a share of its peak of $s, outside 0.2-1.1"
done
h5dump -H -d /gpus "$file" | grep -q "SIMPLE { ( $rows )" || fail "/gpus has not $rows rows"
"$report" doctor "$file" | tee /dev/stderr | grep -q '^GPUs (per rank and device' || fail "the report has no GPUs table"
echo "doctor_gpu.sh: $rows GPU(s), shares of peak: $(echo $shares)"
