#!/usr/bin/env bash
# Pack a CUDA build for a GPU machine that has the NVIDIA stack (driver, CUDA, cuBLAS, cuDNN,
# NCCL, CUPTI: as a CUDA toolkit or PyTorch's Python packages) but none of the Debian
# libraries the build links (Open MPI, HDF5, OpenBLAS, ...), so that scripts/gpu-check.sh runs
# there without building anything (--no-build).
#
#   scripts/pack-gpu.sh [--build DIR] [--out FILE.tar.xz] [--mutants DIR] [--baseline BIN]
#   then, on the GPU machine, in the repository's root:
#     tar -xJf FILE.tar.xz -C /tmp/cs && . /tmp/cs/env.sh && scripts/gpu-check.sh --no-build --build /tmp/cs/build
#
# --build: the CUDA build (default build-cuda/, as gpu-check.sh builds it); --out: the archive
# (default results/gpu-pack.tar.xz); --mutants: scripts/mutants.py's programs (its build's
# --out), packed as mutants/ for gpu-check.sh --mutants; --baseline: an earlier build's
# commscope-train (built as this one, loading the same libraries), packed as
# baseline/commscope-train for gpu-check.sh --baseline. The archive holds:
# - build/: the build tree's test lists (every CTestTestfile.cmake, its paths made relative to
#   where it is unpacked and to the repository it runs from: env.sh writes them back) and, in
#   build/bin, the tools, what the gpu-labelled tests run and h5dump;
# - lib/: every library those programs and Open MPI's launcher and components load, but the C
#   and C++ runtimes and the NVIDIA stack, which the GPU machine has in its own versions;
# - usr/: Open MPI's launcher, components and help texts, and PMIx's components, relocated
#   (OPAL_PREFIX, PMIX_MCA_mca_base_component_path);
# - env.sh: sourced, it sets PATH, LD_LIBRARY_PATH (the packed libraries whose soname the
#   machine lacks, and the NVIDIA libraries of PyTorch's packages where the system has none) and
#   Open MPI's variables, and writes the test lists' paths.
# Where the launcher is another than Debian's Open MPI 4 (its files under
# /usr/lib/x86_64-linux-gnu/openmpi), the archive has no launcher: the tools run one rank.
set -euo pipefail

usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"; }
die() { echo "pack-gpu.sh: $*" >&2; exit 2; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="$root/build-cuda"
out="$root/results/gpu-pack.tar.xz"
mutants=""
baseline=""
while [ $# -gt 0 ]; do
  case "$1" in
    --baseline) [ $# -ge 2 ] || die "--baseline needs a program"; baseline=$(realpath -m "$2"); shift 2 ;;
    --mutants) [ $# -ge 2 ] || die "--mutants needs a folder"; mutants=$(realpath -m "$2"); shift 2 ;;
    --build) [ $# -ge 2 ] || die "--build needs a folder"; build=$(realpath -m "$2"); shift 2 ;;
    --out) [ $# -ge 2 ] || die "--out needs a file"; out=$(realpath -m "$2"); shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
[ -f "$build/CMakeCache.txt" ] || die "no build in '$build' (no CMakeCache.txt)"
[ -x "$build/bin/test_trainer_cuda_kernels" ] || die "'$build' is not a CUDA build (configure with -DCOMMSCOPE_CUDA=ON)"
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
[ -n "$src" ] || die "'$build/CMakeCache.txt' names no source folder"
[ -z "$baseline" ] || [ -x "$baseline" ] || die "--baseline: '$baseline' is not a program"
[ -z "$mutants" ] || [ -f "$mutants/mutants.tsv" ] || die "--mutants: no mutants.tsv in '$mutants' (scripts/mutants.py build)"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/build/bin" "$stage/lib"

# The programs: the tools, and whatever a gpu-labelled test runs from the build's bin/.
programs=$(cd "$build" && ctest -L gpu -N -V 2>/dev/null | grep 'Test command' |
  grep -oE "$build/bin/[A-Za-z0-9_.+-]+" | sort -u | xargs -r -n1 basename || true)
for p in $(cd "$build/bin" && ls commscope-* 2>/dev/null) $programs; do
  [ -f "$build/bin/$p" ] && cp -a "$build/bin/$p" "$stage/build/bin/"
done
# The mutants (they load what test_trainer_cuda_kernels loads).
if [ -n "$mutants" ]; then
  mkdir -p "$stage/mutants"
  cut -f1 "$mutants/mutants.tsv" | tail -n +2 | while read -r m; do cp -a "$mutants/$m" "$stage/mutants/"; done
  cp "$mutants/mutants.tsv" "$stage/mutants/"
fi
if [ -n "$baseline" ]; then
  mkdir -p "$stage/baseline"
  cp -a "$baseline" "$stage/baseline/commscope-train"
fi
# h5dump, which tests read files with (hdf5-tools).
if command -v h5dump >/dev/null; then cp -L "$(command -v h5dump)" "$stage/build/bin/"; fi
# nccl-tests' and OSU's names are links to commscope-bench.
(cd "$build/bin" && find . -maxdepth 1 -type l -lname commscope-bench -printf '%f\n') |
  while read -r l; do ln -sfn commscope-bench "$stage/build/bin/$l"; done

# The test lists, paths written as @BUILD@ and @SOURCE@.
(cd "$build" && find . -name CTestTestfile.cmake) | while read -r f; do
  mkdir -p "$stage/build/$(dirname "$f")"
  sed -e "s|$build|@BUILD@|g" -e "s|$src|@SOURCE@|g" "$build/$f" >"$stage/build/$f"
done

# Open MPI's launcher and components, and PMIx's, where they are Debian's.
ompi=/usr/lib/x86_64-linux-gnu/openmpi
pmix=/usr/lib/x86_64-linux-gnu/pmix2
elves=("$stage"/build/bin/*)
for e in "$stage"/baseline/* "$stage"/mutants/*; do [ -x "$e" ] && elves+=("$e"); done
if [ -x /usr/bin/orterun ] && [ -x /usr/bin/orted ] && [ -d "$ompi/lib/openmpi3" ]; then
  mkdir -p "$stage/usr/bin" "$stage$ompi/lib" "$stage/usr/share"
  cp -a /usr/bin/orterun /usr/bin/orted "$stage/usr/bin/"  # orted: a rank started without a launcher starts one
  ln -s orterun "$stage/usr/bin/mpirun"
  ln -s orterun "$stage/usr/bin/mpiexec"
  cp -a "$ompi/lib/openmpi3" "$stage$ompi/lib/"
  cp -a /usr/share/openmpi "$stage/usr/share/"
  [ -d "$pmix/lib/pmix" ] && mkdir -p "$stage$pmix/lib" && cp -a "$pmix/lib/pmix" "$stage$pmix/lib/"
  [ -d /usr/share/pmix ] && cp -a /usr/share/pmix "$stage/usr/share/"
  elves+=("$stage/usr/bin/orterun" "$stage/usr/bin/orted" "$stage$ompi"/lib/openmpi3/*.so)
  [ -d "$stage$pmix/lib/pmix" ] && elves+=("$stage$pmix"/lib/pmix/*.so)
else
  echo "pack-gpu.sh: no Debian Open MPI 4 launcher here: the archive runs one rank without one" >&2
fi

# Every library those load, but the C and C++ runtimes and the NVIDIA stack (the GPU
# machine's own). A component whose libraries are not here (InfiniBand, UCX, libfabric, PSM)
# stays behind with them: Open MPI skips a component it cannot load.
keep_out='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libutil|libresolv|libstdc\+\+|libgcc_s|libcuda|libcudart|libcublas|libcublasLt|libcudnn|libnccl|libcupti|libnvrtc|libnvidia-ml|libnvToolsExt)\.'
fabric='^(libfabric|libucp|libucs|libuct|libucm|libibverbs|librdmacm|libpsm|libpsm2|libmlx|libefa|libnl-)'
for e in "${elves[@]}"; do
  [ -f "$e" ] || continue
  deps=$(ldd "$e" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $1 " " $3 }')
  if printf '%s\n' "$deps" | awk '{print $1}' | grep -qE "$fabric"; then
    case "$e" in "$stage/build/"* | "$stage/baseline/"* | "$stage/mutants/"*) ;; *) rm -f "$e"; continue ;; esac  # a fabric's component
  fi
  printf '%s\n' "$deps" | while read -r name path; do
    [ -n "$name" ] || continue
    printf '%s\n' "$name" | grep -qE "$keep_out" && continue
    [ -e "$stage/lib/$name" ] || cp -L "$path" "$stage/lib/$name"
  done
done

cat >"$stage/env.sh" <<'ENV'
# Sourced on the GPU machine (scripts/pack-gpu.sh): the packed build's programs, libraries and
# launcher, the test lists' paths written for this place and the repository here (the current
# folder, or COMMSCOPE_SOURCE).
cs_pack=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cs_source=${COMMSCOPE_SOURCE:-$PWD}
[ -f "$cs_source/CMakeLists.txt" ] || echo "env.sh: '$cs_source' is not the repository (set COMMSCOPE_SOURCE)" >&2
find "$cs_pack/build" -name CTestTestfile.cmake -exec sed -i -e "s|@BUILD@|$cs_pack/build|g" -e "s|@SOURCE@|$cs_source|g" {} +
export COMMSCOPE_ORIGINAL_LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}
# Of the packed libraries, Open MPI's own and those whose soname this machine lacks (its own
# serve the others, and the programs that are not ours, Python's, see no older copy of them):
# links in lib-used/. Open MPI's are always the packed ones: its launcher and components are,
# and a component refuses a library of another Open MPI version. COMMSCOPE_PACK_ALL_LIBS=1 takes
# every packed one.
rm -rf "$cs_pack/lib-used" && mkdir -p "$cs_pack/lib-used"
cs_have=$(ldconfig -p 2>/dev/null | awk '{print $1}')
for f in "$cs_pack"/lib/*; do
  case "$(basename "$f")" in
    libmpi*|libopen-rte*|libopen-pal*|libmca_common_*|liboshmem*|libpmix*|libevent*|libhwloc*) cs_ours=1 ;;
    *) cs_ours=${COMMSCOPE_PACK_ALL_LIBS:-0} ;;
  esac
  if [ "$cs_ours" = 1 ] || ! printf '%s\n' "$cs_have" | grep -qxF "$(basename "$f")"; then
    ln -s "$f" "$cs_pack/lib-used/"
  fi
done
cs_libs=$cs_pack/lib-used
# The NVIDIA libraries: the system's (ldconfig, the CUDA toolkit), else PyTorch's packages'.
for cs_lib in libcudnn.so.9 libnccl.so.2 libcublas.so.13 libcupti.so.13 libcudart.so.13; do
  ldconfig -p 2>/dev/null | grep -q "$cs_lib" && continue
  for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib $(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null); do
    f=$(find "$d" -name "$cs_lib" 2>/dev/null | head -1)
    [ -n "$f" ] && { cs_libs=$cs_libs:$(dirname "$f"); break; }
  done
done
export LD_LIBRARY_PATH=$cs_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$cs_pack/build/bin${PATH:+:$PATH}
if [ -x "$cs_pack/usr/bin/orterun" ]; then
  export PATH=$cs_pack/usr/bin:$PATH
  export OPAL_PREFIX=$cs_pack/usr
  export PMIX_MCA_mca_base_component_path=$cs_pack/usr/lib/x86_64-linux-gnu/pmix2/lib/pmix
  export PMIX_INSTALL_PREFIX=$cs_pack/usr/lib/x86_64-linux-gnu/pmix2
  export OMPI_MCA_mca_base_component_show_load_errors=0 PMIX_MCA_mca_base_component_show_load_errors=0
  export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader,tcp
fi
unset cs_lib cs_libs cs_have cs_ours d f
ENV

mkdir -p "$(dirname "$out")"
tar -C "$stage" -cJf "$out" .
echo "pack-gpu.sh: $out ($(du -h "$out" | cut -f1)): $(ls "$stage/build/bin" | wc -l) programs, $(ls "$stage/lib" | wc -l) libraries$([ -x "$stage/usr/bin/orterun" ] && echo ", Open MPI's launcher")$([ -n "$mutants" ] && echo ", $(($(wc -l <"$mutants/mutants.tsv") - 1)) mutants")$([ -n "$baseline" ] && echo ", a baseline commscope-train")"
