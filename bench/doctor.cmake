# commscope-doctor: pairwise latency/bandwidth, per-rank sgemm and memcpy probes and per-node
# allreduce into one HDF5 file (commscope-report doctor names the outliers; docs/doctor.md).
# Included from bench/CMakeLists.txt.
include(CommscopeOpenBLAS)

# The tool: the run (doctor/main.cpp) and its three phases, one file each.
add_executable(commscope-doctor ${CMAKE_CURRENT_LIST_DIR}/doctor/main.cpp ${CMAKE_CURRENT_LIST_DIR}/doctor/pairs.cpp
                                ${CMAKE_CURRENT_LIST_DIR}/doctor/probes.cpp ${CMAKE_CURRENT_LIST_DIR}/doctor/nodes.cpp)
# Not the bench's core: the environment record, the collectives, the file formats and common's
# utilities (parse_size) are all it takes.
target_link_libraries(commscope-doctor PRIVATE commscope_bench_env commscope::collectives commscope::common commscope::h5
                                               commscope::formats commscope_openblas CLI11::CLI11 commscope_build_flags)
# --device cuda: the GPU phase (doctor/gpus.cpp) and its probes (doctor/gpu_probes.cpp: cuBLAS,
# opened at its first call by machine's commscope_cublas, and the CUDA runtime; the peaks from
# model, the host links from machine's nvidia-smi and sysfs readers, the CUDA checks from the
# device collectives).
if(COMMSCOPE_WITH_CUDA)
  target_sources(commscope-doctor PRIVATE ${CMAKE_CURRENT_LIST_DIR}/doctor/gpus.cpp
                                          ${CMAKE_CURRENT_LIST_DIR}/doctor/gpu_probes.cpp)
  target_compile_definitions(commscope-doctor PRIVATE COMMSCOPE_WITH_CUDA=1)
  target_link_libraries(commscope-doctor PRIVATE commscope::model commscope::machine commscope::collectives_cuda
                                                 CUDA::cudart commscope_cublas)
endif()
install(TARGETS commscope-doctor RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

if(COMMSCOPE_BUILD_TESTS)
  set(expect ${CMAKE_CURRENT_LIST_DIR}/tests/expect.sh)
  set(doctor_quick --bytes 64K --lat-iters 5 --bw-iters 1 --passes 2 --probe-time 0.02 --probe-windows 1 --gemm 64
                   --copy-bytes 1M --node-bytes 64K)
  # 3 ranks (odd: one sits out each round): 3 rounds x 2 passes x 2 directions = 12 pair rows, a
  # report that reads them back (the fault finding is tested on known files and emulated hosts).
  set(doctor_np3 ${CMAKE_BINARY_DIR}/doctor-np3.h5)
  add_test(NAME bench.doctor.np3
    COMMAND ${expect} 0 "# wrote .*doctor-np3.h5" 0 -- ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 3
            ${COMMSCOPE_MPIEXEC_FLAGS} $<TARGET_FILE:commscope-doctor> ${doctor_quick} -o ${doctor_np3})
  add_test(NAME bench.doctor.np3_report
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/doctor_report_np3.sh $<TARGET_FILE:commscope-report> ${doctor_np3})
  set_tests_properties(bench.doctor.np3 PROPERTIES FIXTURES_SETUP doctor_np3 LABELS "mpi" TIMEOUT 120 PROCESSORS 2
                                                   ENVIRONMENT "${COMMSCOPE_TEST_ENV}")
  set_tests_properties(bench.doctor.np3_report PROPERTIES FIXTURES_REQUIRED doctor_np3 LABELS "mpi")
  # One rank: no pairs, still probes and a file.
  commscope_add_mpi_test(NAME bench.doctor.np1 RANKS 1 TIMEOUT 60
    COMMAND ${expect} 0 "wrote .*doctor-np1.h5" 0 -- $<TARGET_FILE:commscope-doctor> ${doctor_quick}
            -o ${CMAKE_BINARY_DIR}/doctor-np1.h5)
  # A busy machine (a busy loop per CPU): the probes say that they shared their CPUs and cannot be
  # judged, rather than name a node slow for what other work took.
  commscope_add_mpi_test(NAME bench.doctor.busy RANKS 1 TIMEOUT 60
    COMMAND ${CMAKE_CURRENT_LIST_DIR}/tests/busy.sh -- ${expect} 0
            "# probes not judged: other work shared the probing CPUs in every window \\(rank 0 " 0 --
            $<TARGET_FILE:commscope-doctor> ${doctor_quick} -o ${CMAKE_BINARY_DIR}/doctor-busy.h5)
  # A rank slowed for the probe phase's first 3 s (a test aid) still reads its own rate: its windows
  # lie apart, one a rank per round (4 ranks on 2 CPUs: serial probes).
  add_test(NAME bench.doctor.windows_apart.np4
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/tests/doctor_windows_apart.sh -- ${MPIEXEC_EXECUTABLE}
                   ${MPIEXEC_NUMPROC_FLAG} 4 ${COMMSCOPE_MPIEXEC_FLAGS} $<TARGET_FILE:commscope-doctor> --probes serial
                   --no-nodes --passes 1 --lat-iters 5 --bw-iters 1 --bytes 64K --probe-time 0.2 --probe-windows 3
                   --debug-slow-probe-rank 1 --debug-slow-probe-seconds 3 -o ${CMAKE_BINARY_DIR}/doctor-apart.h5)
  set_tests_properties(bench.doctor.windows_apart.np4 PROPERTIES LABELS "mpi" TIMEOUT 120 PROCESSORS 2 RUN_SERIAL TRUE
                                                                 ENVIRONMENT "${COMMSCOPE_TEST_ENV}")
  # Ctrl-C mid-run: the file published with the rounds so far and named (the doctor renamed it
  # from rank 0's own handler, without the bench's write guard, and said nothing).
  add_test(NAME bench.doctor.interrupt.np3
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/tests/doctor_interrupt.sh $<TARGET_FILE:commscope-report>
                   ${CMAKE_BINARY_DIR}/doctor-interrupt.h5 -- ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 3
                   ${COMMSCOPE_MPIEXEC_FLAGS} $<TARGET_FILE:commscope-doctor> --bytes 64K --lat-iters 200 --bw-iters 1
                   --passes 1000 --no-probes --node-bytes 64K)
  set_tests_properties(bench.doctor.interrupt.np3 PROPERTIES LABELS "mpi" TIMEOUT 120 PROCESSORS 2
                                                             ENVIRONMENT "${COMMSCOPE_STOP_TEST_ENV}")
  commscope_tests_wait(bench.doctor.interrupt.np3)
  # --device cuda without a GPU, or in a build without CUDA: one line naming why, exit status 2,
  # no file (skipped where a GPU is usable: bench.doctor.cuda runs there instead).
  add_test(NAME bench.doctor.cuda.no_gpu
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/tests/gpu.sh absent -- ${expect} 2
                   "^commscope-doctor: --device cuda: (this build has no CUDA|no usable GPU on rank 0 )" 30 --
                   $<TARGET_FILE:commscope-doctor> --device cuda ${doctor_quick} -o ${CMAKE_BINARY_DIR}/doctor-no-gpu.h5)
  set_tests_properties(bench.doctor.cuda.no_gpu PROPERTIES SKIP_RETURN_CODE 77 LABELS "unit"
                                                           ENVIRONMENT "${COMMSCOPE_TEST_ENV}")
  # On a GPU: every GPU's rates against its peaks, each share between 0.2 and 1.1, /gpus written,
  # and the report's table of them (label gpu: skipped where no GPU is usable).
  if(COMMSCOPE_WITH_CUDA)
    add_test(NAME bench.doctor.cuda
             COMMAND ${CMAKE_CURRENT_LIST_DIR}/tests/gpu.sh need -- ${CMAKE_CURRENT_LIST_DIR}/tests/doctor_gpu.sh
                     $<TARGET_FILE:commscope-report> ${CMAKE_BINARY_DIR}/doctor-cuda.h5 -- $<TARGET_FILE:commscope-doctor>
                     --device cuda --bytes 64K --lat-iters 5 --bw-iters 1 --passes 1 --probe-time 0.1 --probe-windows 2
                     --gemm 64 --copy-bytes 1M --no-nodes --gpu-gemm 4096 --gpu-bytes 256M)
    set_tests_properties(bench.doctor.cuda PROPERTIES SKIP_RETURN_CODE 77 LABELS "gpu" TIMEOUT 300 RUN_SERIAL TRUE
                                                      ENVIRONMENT "${COMMSCOPE_TEST_ENV}")
  endif()
  # They measure speed: alone.
  set_tests_properties(bench.doctor.np3 bench.doctor.np1 bench.doctor.busy PROPERTIES RUN_SERIAL TRUE)
  foreach(case
      "probes|--probes: x not in|--probes x"
      "bytes|--bytes: at least one byte per message|--bytes 4 --window 8"
      "node_algo|unknown algorithm 'nope'|--node-algo nope"
      "timeout|--timeout: Value 0 not in range 0.001|-T 0"
      "device|--device: tpu not in \\{cpu,cuda\\}|--device tpu"
      "gpu_bytes|--gpu-bytes: must be positive|--gpu-bytes 0")
    string(REPLACE "|" ";" parts "${case}")
    list(GET parts 0 name)
    list(GET parts 1 regex)
    list(GET parts 2 args)
    separate_arguments(args)
    add_test(NAME bench.doctor.bad_${name} COMMAND ${expect} 2 "${regex}" 30 -- $<TARGET_FILE:commscope-doctor> ${args})
    set_tests_properties(bench.doctor.bad_${name} PROPERTIES LABELS "unit" ENVIRONMENT "${COMMSCOPE_TEST_ENV}")
  endforeach()
endif()
