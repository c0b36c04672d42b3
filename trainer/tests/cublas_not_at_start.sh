#!/usr/bin/env bash
# A CUDA build's programs that link cuBLAS through machine's commscope_cublas load it at their
# first GEMM on a GPU, not at start: each program's --help (no GPU work) must not load libcublas or
# libcublasLt (the dynamic loader's own record, LD_DEBUG=files). Loading libcublasLt took 0.4-0.5 s
# of every start on the 2-core VM.
#   cublas_not_at_start.sh PROGRAM...
status=0
for prog in "$@"; do
  name=$(basename "$prog")
  loaded=$(LD_DEBUG=files "$prog" --help 2>&1 >/dev/null | grep -o 'file=libcublas[A-Za-z]*\.so[.0-9]*' | sort -u)
  if [ -n "$loaded" ]; then
    echo "cublas_not_at_start.sh: FAIL: $name --help loaded" ${loaded//file=/}
    status=1
  else
    echo "cublas_not_at_start.sh: $name --help loaded no cuBLAS"
  fi
done
exit $status
