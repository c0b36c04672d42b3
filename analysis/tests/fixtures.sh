#!/usr/bin/env bash
# fixtures.sh BUILD_BIN_DIR OUT_DIR MPIEXEC: fixture files for the report's tests, from the real
# programs: bench-np{1,2,4}.h5 (commscope-bench), train-np{1,2,4}.h5 (commscope-train's
# profiles, data parallel), train3d-np4.h5 (4 ranks as (dp,tp,pp) = (1,2,2), 2
# micro-batches), train-np1-t2.h5 (one rank on 2 threads: the cores of train-np2.h5's two ranks)
# and train-np1-l3.h5 (another workload: 3 layers). A file is kept when it is newer than the program that writes it (idempotent), and
# written again when the program was rebuilt since: a schema change cannot hide behind a stale
# file. Exits non-zero with one line if a program fails.
set -u
if [ $# -ne 3 ]; then
  echo "usage: $0 BUILD_BIN_DIR OUT_DIR MPIEXEC" >&2
  exit 1
fi
bin=$1
out=$2
mpiexec=$3
here=$(cd "$(dirname "$0")" && pwd)
data="$here/../../trainer/tests/data/tiny.txt"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMP_NUM_THREADS=1

mkdir -p "$out" || { echo "fixtures.sh: cannot create $out" >&2; exit 1; }
for exe in commscope-bench commscope-train; do
  [ -x "$bin/$exe" ] || { echo "fixtures.sh: $bin/$exe not found (build it first)" >&2; exit 1; }
done

# run NAME NP PROGRAM ARGS...: PROGRAM on NP ranks (directly for one), output in $out/NAME.log.
run() {
  local name=$1 np=$2
  shift 2
  local launch=()
  if [ "$np" -gt 1 ]; then launch=("$mpiexec" -np "$np" --oversubscribe --bind-to none); fi
  if ! "${launch[@]}" "$@" >"$out/$name.log" 2>&1; then
    echo "fixtures.sh: $name failed ($*); see $out/$name.log: $(tail -n 1 "$out/$name.log")" >&2
    exit 1
  fi
}

made=0
# fixture FILE NP PROGRAM ARGS...: PROGRAM on NP ranks writes FILE, unless FILE is newer than it.
fixture() {
  local file=$1 np=$2 exe=$3
  shift 3
  if [ ! -f "$file" ] || [ "$bin/$exe" -nt "$file" ]; then
    rm -f "$file"
    run "$(basename "$file" .h5)" "$np" "$bin/$exe" "$@"
    made=$((made + 1))
  fi
  [ -f "$file" ] || { echo "fixtures.sh: $exe wrote no $file" >&2; exit 1; }
}
base=(--model tiny --steps 4 --batch 4 --data "$data")
train=("${base[@]}" --threads 1)
for np in 1 2 4; do
  fixture "$out/bench-np$np.h5" "$np" commscope-bench all --algo all -b 8 -e 64K -f 4 -n 5 -w 1 -c 1 \
    --out "$out/bench-np$np.h5"
  fixture "$out/train-np$np.h5" "$np" commscope-train "${train[@]}" --profile "$out/train-np$np.h5"
done
fixture "$out/train3d-np4.h5" 4 commscope-train "${train[@]}" --tp 2 --pp 2 --micro-batches 2 \
  --profile "$out/train3d-np4.h5"
fixture "$out/train-np1-t2.h5" 1 commscope-train "${base[@]}" --threads 2 --profile "$out/train-np1-t2.h5"
fixture "$out/train-np1-l3.h5" 1 commscope-train "${train[@]}" --layers 3 --profile "$out/train-np1-l3.h5"
echo "fixtures.sh: $made made, $((9 - made)) kept, in $out"
