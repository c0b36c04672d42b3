# The scripts end to end: run-suite.sh --quick on this build (bench, trainer at 1 and 2 ranks,
# reports, the reports checked against the HDF5 files), and bad arguments to both scripts: one
# line, exit status 2, before anything runs.
set(expect ${PROJECT_SOURCE_DIR}/bench/tests/expect.sh)
set(suite ${PROJECT_SOURCE_DIR}/scripts/run-suite.sh)
set(compare ${PROJECT_SOURCE_DIR}/scripts/compare-interconnects.sh)
set(gpucheck ${PROJECT_SOURCE_DIR}/scripts/gpu-check.sh)
set(bindir $<TARGET_FILE_DIR:commscope-bench>)

add_test(NAME suite.quick.np2
         COMMAND ${expect} 0 "Report: its numbers match the HDF5 files" 0 --
                 bash ${suite} --quick --ranks 2 --bin ${bindir} --out ${CMAKE_BINARY_DIR}/suite-quick)
set_tests_properties(suite.quick.np2 PROPERTIES ENVIRONMENT "${COMMSCOPE_TEST_ENV};OMP_NUM_THREADS=1" LABELS "mpi"
                                                PROCESSORS 2 TIMEOUT 600)

foreach(case
    "suite|ranks_zero|--ranks needs a positive integer|--ranks 0"
    "suite|steps_word|--steps needs a positive integer|--steps five"
    "suite|bad_launcher|--launcher must be mpirun or srun|--launcher pbs"
    "suite|bad_device|--device must be cpu or cuda|--device tpu"
    "suite|unknown|unknown argument '--bogus'|--bogus"
    "suite|no_hostfile|cannot read the hostfile|--hostfile /no/such/hosts"
    "suite|hostfile_with_srun|--hostfile is for mpirun|--launcher srun --hostfile ${PROJECT_SOURCE_DIR}/README.md"
    "suite|unwritable_out|cannot create the output folder|--bin ${bindir} --out /proc/commscope-results"
    "suite|no_binaries|no commscope-bench in|--bin /no/such/bin --out ${CMAKE_BINARY_DIR}/suite-nobin"
    "compare|ranks_one|at least 2|--ranks 1"
    "compare|bad_transport|--transport wants NAME=ARGS|--transport ib"
    "compare|unknown|unknown argument '--fast'|--fast"
    "compare|unwritable_out|cannot write the output folder|--bin ${bindir} --out /proc/commscope-compare"
    "gpucheck|bad_ranks|--ranks needs a positive integer|--ranks x"
    "gpucheck|bad_iters|--iters needs a non-negative integer|--iters -3"
    "gpucheck|unknown|unknown argument '--cpu'|--cpu")
  string(REPLACE "|" ";" parts "${case}")
  list(GET parts 0 script)
  list(GET parts 1 name)
  list(GET parts 2 regex)
  list(GET parts 3 args)
  separate_arguments(args)
  add_test(NAME ${script}.flags.${name} COMMAND ${expect} 2 "${regex}" 0 -- bash ${${script}} ${args})
  set_tests_properties(${script}.flags.${name} PROPERTIES LABELS "unit" TIMEOUT 60)
endforeach()

# gpu-check.sh on a machine without a GPU: one line, exit 2, nothing built (skipped where a GPU is).
add_test(NAME gpucheck.no_gpu COMMAND ${PROJECT_SOURCE_DIR}/bench/tests/gpu.sh absent -- ${expect} 2
                                      "no NVIDIA GPU is usable here" 0 -- bash ${gpucheck} --out ${CMAKE_BINARY_DIR}/gpucheck)
set_tests_properties(gpucheck.no_gpu PROPERTIES SKIP_RETURN_CODE 77 LABELS "unit" TIMEOUT 60)
