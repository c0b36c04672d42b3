# The scripts end to end: run-suite.sh --quick on this build (bench, trainer at 1 and 2 ranks,
# reports, the reports checked against the HDF5 files), and bad arguments to both scripts: one
# line, exit status 2, before anything runs.
set(expect ${PROJECT_SOURCE_DIR}/bench/tests/expect.sh)
set(suite ${PROJECT_SOURCE_DIR}/scripts/run-suite.sh)
set(compare ${PROJECT_SOURCE_DIR}/scripts/compare-interconnects.sh)
set(gpucheck ${PROJECT_SOURCE_DIR}/scripts/gpu-check.sh)
set(ratios ${PROJECT_SOURCE_DIR}/scripts/replay-ratios.sh)
set(pack ${PROJECT_SOURCE_DIR}/scripts/pack-gpu.sh)
set(bindir $<TARGET_FILE_DIR:commscope-bench>)

# The summary is saved as summary.txt and fits one screen, 45 lines (the fits' 60 lines are in the report),
# with the bench's verdicts against the machine model and the step's communication against the
# same calls alone, in words (no negative figure). 3 training steps, not --quick's 5: every part
# of the summary, 10 s sooner.
add_test(NAME suite.quick.np2
         COMMAND ${expect} 0 "Report: its numbers match the HDF5 files" 0 --
                 bash -c "bash \"$0\" \"$@\" && grep -q '^Report: its numbers match' \"$7/summary.txt\" && grep -A1 '^Verdicts' \"$7/summary.txt\" | grep -q 'at the largest sizes' && grep -A1 '^Communication in the step' \"$7/summary.txt\" | grep -q 'Alone it takes' && ! sed -n '/^Communication in the step/,/^Report:/p' \"$7/summary.txt\" | grep -E '(^|[ (])-[0-9]' && n=$(wc -l < \"$7/summary.txt\") && echo \"summary.txt: $n lines\" && [ $n -le 45 ]"
                 ${suite} --quick --ranks 2 --bin ${bindir} --out ${CMAKE_BINARY_DIR}/suite-quick --steps 3)
set_tests_properties(suite.quick.np2 PROPERTIES ENVIRONMENT "${COMMSCOPE_TEST_ENV};OMP_NUM_THREADS=1" LABELS "mpi"
                                                PROCESSORS 2 TIMEOUT 600)

# The summary's verdict lines from a report's (scripts/suite-verdicts.py), on fixed lines: fast.
add_test(NAME suite.summary_verdicts COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/tests/suite-verdicts.sh)
set_tests_properties(suite.summary_verdicts PROPERTIES LABELS "unit" TIMEOUT 60)
# The summary's collectives from a report's CSV files (scripts/suite-collectives.py): medians, no fit.
add_test(NAME suite.summary_collectives COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/tests/suite-collectives.sh)
set_tests_properties(suite.summary_collectives PROPERTIES LABELS "unit" TIMEOUT 60)

foreach(case
    "suite|ranks_zero|--ranks needs a positive integer|--ranks 0"
    "suite|steps_word|--steps needs a positive integer|--steps five"
    "suite|bad_launcher|--launcher must be mpirun or srun|--launcher pbs"
    "suite|bad_device|--device must be cpu or cuda|--device tpu"
    "suite|unknown|unknown argument '--bogus'|--bogus"
    "suite|no_hostfile|cannot read the hostfile|--hostfile /no/such/hosts"
    "suite|hostfile_with_srun|--hostfile is for mpirun|--launcher srun --hostfile ${PROJECT_SOURCE_DIR}/README.md"
    "suite|cluster_zero|--cluster needs a positive host count|--cluster 0"
    "suite|cluster_with_hostfile|--cluster makes its own hosts|--cluster 2 --hostfile ${PROJECT_SOURCE_DIR}/README.md"
    "suite|link_without_cluster|--link and --host-link shape an emulated cluster's links|--host-link host2=100mbit"
    "suite|bad_link|--link: a tc rate like 100mbit or 1gbit, not '1gb'|--cluster 2 --link 1gb"
    "suite|unwritable_out|cannot create the output folder|--bin ${bindir} --out /proc/commscope-results"
    "suite|no_binaries|no commscope-bench in|--bin /no/such/bin --out ${CMAKE_BINARY_DIR}/suite-nobin"
    "compare|ranks_one|at least 2|--ranks 1"
    "compare|bad_transport|--transport wants NAME=ARGS|--transport ib"
    "compare|unknown|unknown argument '--fast'|--fast"
    "compare|cluster_zero|--cluster needs a positive host count|--cluster 0"
    "compare|bad_link|--links: a tc rate like 1gbit or unshaped, not '1gb'|--cluster 2 --links unshaped,1gb"
    "compare|cluster_with_transport|--cluster compares --links|--cluster 2 --transport ib=x"
    "compare|unwritable_out|cannot write the output folder|--bin ${bindir} --out /proc/commscope-compare"
    "gpucheck|bad_ranks|--ranks needs a positive integer|--ranks x"
    "gpucheck|bad_iters|--iters needs a non-negative integer|--iters -3"
    "gpucheck|unknown|unknown argument '--cpu'|--cpu"
    "gpucheck|anchors_missing|--anchors: no train_gpt2cu in '/no/such/anchors'|--anchors /no/such/anchors"
    "ratios|records_zero|--records needs a positive integer, not '0'|--records 0"
    "ratios|steps_two|--steps needs at least 3|--steps 2"
    "ratios|bad_layout|layout '4': RANKS:OPTIONS|4"
    "ratios|layout_ranks|layout 'x:--dp_ddp': RANKS:OPTIONS, RANKS a positive integer|x:--dp_ddp"
    "ratios|bad_cpus|--cpus 'x' is not a list of CPUs|--bin ${bindir} --cpus x"
    "ratios|no_bin|no commscope-train in '/no/such/bin'|--bin /no/such/bin"
    "pack|no_build|no build in '/no/such/build'|--build /no/such/build")
  string(REPLACE "|" ";" parts "${case}")
  list(GET parts 0 script)
  list(GET parts 1 name)
  list(GET parts 2 regex)
  list(GET parts 3 args)
  separate_arguments(args)
  add_test(NAME ${script}.flags.${name} COMMAND ${expect} 2 "${regex}" 0 -- bash ${${script}} ${args})
  set_tests_properties(${script}.flags.${name} PROPERTIES LABELS "unit" TIMEOUT 60)
endforeach()

# compare-interconnects.sh stops on a run that fails, naming it and its status (it once went on
# with `|| true`); here mpirun itself fails (a transport that does not exist).
add_test(NAME compare.failed_run
         COMMAND ${expect} 2 "the broken run failed with status [1-9]" 0 -- bash ${compare} --quick --bin ${bindir}
                 --out ${CMAKE_BINARY_DIR}/compare-failed --transport "broken=--mca btl no_such_btl")
set_tests_properties(compare.failed_run PROPERTIES ENVIRONMENT "${COMMSCOPE_TEST_ENV}" LABELS "mpi" PROCESSORS 2 TIMEOUT 120)

# compare-interconnects.sh compares only what crosses the transport: no shm or hier (shared
# memory inside the node) beside the link's algorithms, and the shared-memory transport is named
# vader, not shm (the algorithm's name). The unshaped runs take the machine's figures given, not
# probed (the shaped run's come from its own machine file): 3.4 s against 8.2.
add_test(NAME compare.quick.link_algorithms
         COMMAND ${PROJECT_SOURCE_DIR}/scripts/tests/compare-link-algorithms.sh ${compare} ${bindir}
                 ${CMAKE_BINARY_DIR}/compare-quick)
set_tests_properties(compare.quick.link_algorithms PROPERTIES ENVIRONMENT "${COMMSCOPE_TEST_ENV};${COMMSCOPE_GIVEN_MACHINE}" LABELS "mpi"
                                                              PROCESSORS 2 TIMEOUT 300)

# gpu-check.sh on a machine without a GPU: one line, exit 2, nothing built (skipped where a GPU is).
add_test(NAME gpucheck.no_gpu COMMAND ${PROJECT_SOURCE_DIR}/bench/tests/gpu.sh absent -- ${expect} 2
                                      "no NVIDIA GPU is usable here" 0 -- bash ${gpucheck} --out ${CMAKE_BINARY_DIR}/gpucheck)
set_tests_properties(gpucheck.no_gpu PROPERTIES SKIP_RETURN_CODE 77 LABELS "unit" TIMEOUT 60)
# Its verdict on the GPU tests: skipped ones are reported as skipped and fail the check (ctest's
# "100% tests passed" counts them as passed).
add_test(NAME gpucheck.count_tests COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/tests/gpu-count.sh)
set_tests_properties(gpucheck.count_tests PROPERTIES LABELS "unit" TIMEOUT 60)
# pack-gpu.sh packs a CUDA build only.
if(NOT COMMSCOPE_WITH_CUDA)
  add_test(NAME pack.flags.not_cuda COMMAND ${expect} 2 "is not a CUDA build \\(configure with -DCOMMSCOPE_CUDA=ON\\)" 0
                                            -- bash ${pack} --build ${CMAKE_BINARY_DIR})
  set_tests_properties(pack.flags.not_cuda PROPERTIES LABELS "unit" TIMEOUT 60)
endif()
# replay-ratios.sh at its smallest (1 recording, 1 replay, 3 steps, ddp on 2 ranks): its table's row
# with a ratio and identical calls and bytes, exit status 0. The ratio is printed, not judged.
add_test(NAME ratios.np2
         COMMAND ${expect} 0 "\\| 2 \\| [0-9.]+ \\([0-9. ]+\\) \\| [0-9.]+ \\([0-9. ]+\\) \\| [0-9.]+ \\| identical \\|" 0 --
                 bash ${ratios} --bin ${bindir} --out ${CMAKE_BINARY_DIR}/ratios-np2 --records 1 --replays 1 --steps 3
                 "2:--dp ddp")
set_tests_properties(ratios.np2 PROPERTIES ENVIRONMENT "${COMMSCOPE_TEST_ENV}" LABELS "mpi" PROCESSORS 2 TIMEOUT 120)
# Every script's --help: its usage text, whole, without code; emulate-cluster.sh takes --prefix
# before its command.
add_test(NAME scripts.help COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/tests/help.sh)
set_tests_properties(scripts.help PROPERTIES LABELS "unit" TIMEOUT 120)
# A test that reads a file another test writes runs alone (ctest -R READER, or ctest -L unit where its
# writer is an mpi test): its writer is a fixture it requires, which ctest selects with it.
set(readers_and_writers
    bench.smoke.readback=bench.smoke.np3 bench.smoke.h5dump=bench.smoke.np3
    bench.flags.run_cycles.readback=bench.flags.run_cycles.np2 bench.timeout.ring.readback=bench.timeout.ring.np3
    bench.timeout.ring.json=bench.timeout.ring.np3 bench.timeout.shm.readback=bench.timeout.shm.np3
    bench.timeout.mpi.readback=bench.timeout.mpi.np3
    analysis.report.synthetic_stalled_plot=analysis.report.bench_stalled
    analysis.report.readable_csv_bytes=analysis.report.bench_synthetic
    analysis.report.readable_speedup_ticks=analysis.report.scaling
    analysis.report.readable_layouts=analysis.report.scaling_3d
    analysis.check_report.mismatch_caught=analysis.report.bench_np2
    analysis.report.profile_operators_add_up=analysis.report.profile_np2
    replay.report.vit128_one_rank_differs=replay.import.vit128_one_rank cluster.bench.hosts=cluster.bench.2x2)
foreach(algo ring mpi shm)
  list(APPEND readers_and_writers bench.fault.killed_rank.${algo}.readback=bench.fault.killed_rank.${algo}.np3)
endforeach()
foreach(name bench_np2 bench_np4 bench_cuda_h100 bench_synthetic bench_runs bench_stalled profile_np2 scaling scaling_3d
             scaling_same_cores)
  list(APPEND readers_and_writers analysis.check_report.${name}=analysis.report.${name})
endforeach()
add_test(NAME tests.readers_run_alone
         COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/tests/run-alone.sh ${CMAKE_CTEST_COMMAND} ${CMAKE_BINARY_DIR}
                 ${readers_and_writers})
set_tests_properties(tests.readers_run_alone PROPERTIES LABELS "unit" TIMEOUT 120)

# An emulated cluster (scripts/emulate-cluster.sh, label `cluster`): two hosts with 3 slots each
# from network and UTS namespaces, made once by a fixture and removed after the last test that
# needs it (also when one fails). Where no cluster can be made (not root, no namespaces) the
# fixture and every test skip, saying why. Ranks talk over TCP between the hosts, vader within.
# Its own name, one per build tree: other clusters may be up on this machine, other clones' test
# runs among them (one name for all let one run's fixture take down another's cluster).
string(MD5 cluster_tree "${CMAKE_BINARY_DIR}")
string(SUBSTRING "${cluster_tree}" 0 8 cluster_tree)
set(cluster_prefix csctest-${cluster_tree})
set(cluster ${PROJECT_SOURCE_DIR}/scripts/tests/cluster.sh)
set(cluster_mpirun ${PROJECT_SOURCE_DIR}/scripts/emulate-cluster.sh mpirun --prefix ${cluster_prefix})
add_test(NAME cluster.up COMMAND ${cluster} up ${cluster_prefix})
add_test(NAME cluster.down COMMAND ${cluster} down ${cluster_prefix})
set_tests_properties(cluster.up PROPERTIES FIXTURES_SETUP cluster)
set_tests_properties(cluster.down PROPERTIES FIXTURES_CLEANUP cluster)
# commscope_cluster_test(NAME name COMMAND ...): a test on the fixture's cluster.
function(commscope_cluster_test)
  cmake_parse_arguments(T "" "NAME" "COMMAND" ${ARGN})
  add_test(NAME ${T_NAME} COMMAND ${T_COMMAND})
  set_tests_properties(${T_NAME} PROPERTIES FIXTURES_REQUIRED cluster)
endfunction()
set(cluster_bench_h5 ${CMAKE_BINARY_DIR}/cluster-bench.h5)
# (a) Every collective with our three algorithms and MPI's, 2 hosts x 2 ranks, checked.
commscope_cluster_test(NAME cluster.bench.2x2
  COMMAND ${cluster} run ${cluster_prefix} --fresh ${cluster_bench_h5} -- ${expect} 0 "Out of bounds values : 0 OK" 0 --
          ${cluster_mpirun} -np 4 --map-by ppr:2:node $<TARGET_FILE:commscope-bench> all --algo ring,rhd,mpi,tree
          -b 8 -e 64K -f 32 -n 2 -w 1 -c 1 --out ${cluster_bench_h5})
# (d) Its environment record: 2 hosts, 2 ranks on each.
commscope_cluster_test(NAME cluster.bench.hosts
  COMMAND ${cluster} hosts ${cluster_prefix} ${cluster_bench_h5} 2 host1:2,host2:2)
set_tests_properties(cluster.bench.2x2 PROPERTIES FIXTURES_SETUP cluster_bench_2x2)
set_tests_properties(cluster.bench.hosts PROPERTIES FIXTURES_REQUIRED "cluster;cluster_bench_2x2")
# (b) The correctness suite across hosts, even and uneven (quick counts, three types: every case
# crosses TCP on shared cores); shm is refused across nodes by design: skipped, and said.
commscope_cluster_test(NAME cluster.correctness.2x2
  COMMAND ${cluster} run ${cluster_prefix} -- ${expect} 0 "shm skipped: this node holds 2 of 4 ranks" 0 --
          ${cluster_mpirun} -np 4 --map-by ppr:2:node $<TARGET_FILE:test_collectives_correctness> --quick --types f32,bf16,i32)
commscope_cluster_test(NAME cluster.correctness.3and2
  COMMAND ${cluster} run ${cluster_prefix} -- ${expect} 0 "shm skipped: this node holds 3 of 5 ranks" 0 --
          ${cluster_mpirun} -np 5 $<TARGET_FILE:test_collectives_correctness> --quick --types f32,bf16,i32)
# (c) Communicator::split_by_node gives the hosts' real layout.
commscope_cluster_test(NAME cluster.node_split.2x2
  COMMAND ${cluster} run ${cluster_prefix} -- ${expect} 0 "2 nodes \\(host1: 2, host2: 2\\): OK" 0 --
          ${cluster_mpirun} -np 4 --map-by ppr:2:node $<TARGET_FILE:test_node_split> --expect 2,2)
commscope_cluster_test(NAME cluster.node_split.3and2
  COMMAND ${cluster} run ${cluster_prefix} -- ${expect} 0 "2 nodes \\(host1: 3, host2: 2\\): OK" 0 --
          ${cluster_mpirun} -np 5 $<TARGET_FILE:test_node_split> --expect 3,2)
# (e) A shaped link is what the time measures: 1 MiB allreduce, host2's link at 100mbit against
# unshaped, both measured in this test (a ratio of two rates, not a time against a constant):
# at least 3x (about 84 ms against a few ms expected).
commscope_cluster_test(NAME cluster.shaped_link
  COMMAND ${cluster} shaped ${cluster_prefix} $<TARGET_FILE:commscope-bench> 3)
# (f) commscope-doctor on 4 hosts of its own: a clean run names nothing; host3's link at a tenth
# of the others' names host3's links and nothing else; host3 throttled to 10% of a CPU names
# host3 slow.
foreach(fault clean link cpu)
  commscope_cluster_test(NAME cluster.doctor.${fault}
    COMMAND ${cluster} doctor ${cluster_prefix} $<TARGET_FILE:commscope-doctor> $<TARGET_FILE:commscope-report> ${fault})
endforeach()
# (g) A host cut off mid-run (its link deleted): the job ends within -T (+10 s), naming the
# collective and host2, and the rows measured before are in the file.
commscope_cluster_test(NAME cluster.host_cut
  COMMAND ${cluster} cut ${cluster_prefix} $<TARGET_FILE:commscope-bench> 8)
get_property(cluster_tests DIRECTORY PROPERTY TESTS)
list(FILTER cluster_tests INCLUDE REGEX "^cluster\\.")
# One at a time and alone (they share the cluster, measure speed and ratios of times, and the
# doctor's probes would measure another test's share of the cores); skip status 77 says why.
set_tests_properties(${cluster_tests} PROPERTIES LABELS "cluster" SKIP_RETURN_CODE 77 RESOURCE_LOCK cluster
                                                 RUN_SERIAL TRUE PROCESSORS 2 TIMEOUT 180 ENVIRONMENT "OMP_NUM_THREADS=1")
