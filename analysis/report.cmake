# commscope-report: the subcommands over the readers (inputs.cmake), the numeric core and the
# outputs (output.cmake). It links neither the collectives nor the trainer.
find_package(CLI11 CONFIG REQUIRED)
# The subcommands' work, a library so that the unit tests link what the report runs.
add_library(commscope_report STATIC
  src/report/report_writer.cpp src/report/bench_fits.cpp src/report/bench_verdicts.cpp
  src/report/report_bench.cpp src/report/report_compare.cpp src/report/report_profile.cpp
  src/report/report_scaling.cpp src/report/step_prediction.cpp src/report/report_predict.cpp src/report/report_trace.cpp
  src/report/report_doctor.cpp
  src/report/replay_compare.cpp src/report/report_replay.cpp
  src/report/report_hang.cpp src/report/step_communication.cpp src/report/step_communication_text.cpp)
target_link_libraries(commscope_report PUBLIC commscope_analysis_core commscope_analysis_inputs
                      commscope_analysis_output PRIVATE commscope_build_flags)
add_executable(commscope-report src/report/main.cpp)
commscope_command_line_sources(src/report/main.cpp)  # the subcommands' flags (CLI11); the work is in the others
target_link_libraries(commscope-report PRIVATE commscope_report CLI11::CLI11 commscope_build_flags)
install(TARGETS commscope-report RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

if(COMMSCOPE_BUILD_TESTS)
  # Every subcommand on the fixtures the real bench and trainer wrote at 1, 2 and 4 ranks
  # (analysis.fixtures), with -o: report.md, CSV files and valid SVG/PNG plots.
  add_executable(test_analysis_check_outputs tests/check_outputs.cpp)
  target_link_libraries(test_analysis_check_outputs PRIVATE commscope_analysis_output commscope_build_flags)
  set(fx ${CMAKE_BINARY_DIR}/fixtures)
  set(report $<TARGET_FILE:commscope-report>)
  set(check $<TARGET_FILE:test_analysis_check_outputs>)
  set(rdir ${CMAKE_CURRENT_BINARY_DIR}/reports)
  # Bench files with known answers (tests/synthetic_bench.cpp): ties, a protocol switch, runs.
  add_executable(test_analysis_synthetic_bench tests/synthetic_bench.cpp)
  target_link_libraries(test_analysis_synthetic_bench PRIVATE commscope::formats commscope::common commscope_build_flags)
  set(syn ${fx}/synthetic)
  add_test(NAME analysis.synthetic_fixtures COMMAND test_analysis_synthetic_bench ${syn})
  set_tests_properties(analysis.synthetic_fixtures PROPERTIES FIXTURES_SETUP synthetic_bench LABELS "unit")
  foreach(case
      "bench_np1|bench ${fx}/bench-np1.h5"
      "bench_np2|bench ${fx}/bench-np2.h5"
      "bench_np4|bench ${fx}/bench-np4.h5"
      "bench_cuda_h100|bench ${PROJECT_SOURCE_DIR}/analysis/tests/data/bench-cuda-h100-np1.h5"
      "bench_synthetic|bench ${syn}/ties.h5"
      "bench_runs|bench ${syn}/run1.h5 ${syn}/run2.h5 ${syn}/run3.h5"
      "bench_stalled|bench ${syn}/stalled.h5"
      "compare|compare ${fx}/bench-np2.h5 ${fx}/bench-np4.h5"
      "profile_np1|profile ${fx}/train-np1.h5"
      "profile_np2|profile ${fx}/train-np2.h5"
      "profile_np4|profile ${fx}/train-np4.h5"
      "scaling|scaling ${fx}/train-np1.h5 ${fx}/train-np2.h5 ${fx}/train-np4.h5"
      "scaling_3d|scaling ${fx}/train-np1.h5 ${fx}/train-np4.h5 ${fx}/train3d-np4.h5 --bench ${fx}/bench-np4.h5"
      "predict|predict --model 125m --gpus 2,4,8,64 --bench ${fx}/bench-np4.h5 --flops 1e12 --zero 2")
    string(REPLACE "|" ";" parts "${case}")
    list(GET parts 0 name)
    list(GET parts 1 args)
    separate_arguments(args)
    add_test(NAME analysis.report.${name}
             COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/report_outputs.sh ${rdir}/${name} ${report} ${check} ${args})
    # Its folder is the fixture report_out_NAME of the tests that read it (check_report.NAME, ...).
    set_tests_properties(analysis.report.${name} PROPERTIES FIXTURES_REQUIRED "report_fixtures;synthetic_bench"
                                                            FIXTURES_SETUP report_out_${name} LABELS "unit" TIMEOUT 120)
  endforeach()
  # The synthetic files' known answers: overlapping spreads are a tie, mpi's protocol switch at
  # 1 MiB splits its fit in two; without samples a 1.3x lead is a tie, with three runs a winner.
  # Each case "NAME|REGEX|ARGS": `commscope-report SUB ARGS` exits 0 printing REGEX (no ';' or
  # '|' in a regex: they split the case).
  function(report_cases sub)
    foreach(case ${ARGN})
      string(REPLACE "|" ";" parts "${case}")
      list(GET parts 0 name)
      list(GET parts 1 regex)
      list(GET parts 2 args)
      separate_arguments(args)
      add_test(NAME analysis.report.${name}
               COMMAND ${PROJECT_SOURCE_DIR}/bench/tests/expect.sh 0 "${regex}" 0 -- ${report} ${sub} ${args})
      set_tests_properties(analysis.report.${name} PROPERTIES FIXTURES_REQUIRED synthetic_bench LABELS "unit")
    endforeach()
  endfunction()
  report_cases(bench
      "synthetic_ties|Fastest measured: mpi below 2 MiB, tie \\(ring, tree\\) from 2 MiB \\(to 64 MiB, the largest size\\)\\.|${syn}/ties.h5"
      "synthetic_ties_fits|Fastest by the fits: mpi below 2 MiB, tie \\(ring, tree\\) from 2 MiB \\(to 64 MiB, the largest size\\)\\.|${syn}/ties.h5"
      "synthetic_regimes|Fit of mpi \\(2 regimes\\): 8 B to 1 MiB: alpha [12]\\.[09][0-9]* us, [78]\\.[09][0-9]* GB/s, R\\^2 1. 2 MiB to 64 MiB: alpha [0-9.]+ us, 1\\.0[0-9]* GB/s|${syn}/ties.h5"
      "synthetic_no_spread|Fastest measured: tie \\(ring, tree\\) at all sizes\\.|${syn}/run1.h5"
      "synthetic_no_spread_said|The spread is unknown for 18 of 18 measurements|${syn}/run1.h5"
      "synthetic_runs|Fastest measured: ring fastest at all sizes\\.|${syn}/run1.h5 ${syn}/run2.h5 ${syn}/run3.h5"
      "synthetic_unfit|Fastest by the fits: ring \\(rhd not judged: no fit\\) fastest at all sizes\\.|${syn}/unfit.h5"
      "synthetic_stalled_fitted|    8 B +54\\.54 +[0-9.]+ +5\\.004$|${syn}/stalled.h5"
      "synthetic_oversubscribed|Fastest: not judged, ranks outnumber CPUs \\(node0: 4 ranks on 2 CPUs\\)|${syn}/crowded.h5"
      "synthetic_cut_short|cut\\.h5: the sweep was cut short \\(status .running.: the bench stopped before it finished|${syn}/cut.h5"
      "synthetic_types_left_out|left out: allreduce bfloat16 sum|${syn}/types.h5")
  # The time plot says what its lines fit: the measured points are mean calls, the fits' points the
  # median calls (stalled.h5: 10.9x apart).
  add_test(NAME analysis.report.synthetic_stalled_plot
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/stalled_plot_labels.sh ${rdir}/bench_stalled/allreduce_time.gp)
  set_tests_properties(analysis.report.synthetic_stalled_plot PROPERTIES
                       FIXTURES_REQUIRED "synthetic_bench;report_out_bench_stalled" LABELS "unit")
  # The sweep scripts/run-suite.sh measures, with two known regimes per algorithm: both fit; at
  # 4x a size alone above mpi's switch does not, and the report says to sweep by 2x.
  add_test(NAME analysis.report.suite_sweep_fits
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/suite_sweep_fits.sh ${PROJECT_SOURCE_DIR}/scripts/run-suite.sh
                   $<TARGET_FILE:test_analysis_synthetic_bench> ${report} ${rdir}/suite_sweep_fits)
  set_tests_properties(analysis.report.suite_sweep_fits PROPERTIES LABELS "unit" TIMEOUT 120)
  # predict's tensor and pipeline parallelism, hand-computed on predict.h5 (exact lines on 2 ranks:
  # ring allreduce 10 us + S / 2 GB/s, mpi sendrecv 4 us + S / 5 GB/s), 1 TFLOP/s, b 1, 2 bytes.
  # small (l 6, d 384, a 6, s 256, V 256), tp 2, pp 2, M 4, 8 ranks: dp 2; a micro-batch is
  # 18270388224 FLOP, per rank 4/4 of it = 18.27 ms; tp, a rank of the last stage: 4 x 6/2 x 4 =
  # 48 allreduces of A = 256 x 384 x 2 = 192 KiB, 10 + 196608/2000 = 108.304 us each = 5.199 ms,
  # 4 of the head's input gradient (0.4332 ms) and the cross-entropy's 8 row sums and 4 maxima of
  # 256 x 2 = 512 bytes, 10.256 us each (0.1231 ms): 5.755 ms; pp: 4 + 4 sends of A,
  # 4 + 196608/5000 = 43.3216 us each = 0.3466 ms; work 24.37 ms, bubble (pp-1)/M of it = 6.093 ms
  # (1/5 = 20% of 30.46 ms); the last stage holds 2813376 parameters (segment 0: 128 x 384 of wte
  # + 256 x 384 of wpe = 147456; 3 layers of 888384; the final layernorm 768); embedding: segment
  # 0's 147456 x 2 bytes allreduced on 2 ranks = 10 + 294912/2000 us = 0.1575 ms; dp: 2813376 x 2
  # bytes allreduced on 2 ranks = 10 + 5626752/2000 us = 2.823 ms; step 30.46 + 0.1575 + 2.823 =
  # 33.45 ms; memory 2813376 x 16 B + 30.4 MiB x min(4, 2)/4 = 58.1 MiB. Gradient accumulation (M 4, tp = pp = 1):
  # compute 4 x 18.27 = 73.08 ms, the dp allreduce of all 10844160 parameters once, 10.85 ms.
  # pp 4, M 8: the bubble is 3/11 of the pipeline's time.
  set(pbench "--bench ${syn}/predict.h5 --flops 1e12")  # a string: cases are split at spaces below
  separate_arguments(pbench_args UNIX_COMMAND "${pbench}")
  report_cases(predict
      "predict_3d_row|    8  \\(2,2,2\\) +18\\.27 +5\\.755 +0\\.3466 +6\\.093 +20% +2\\.823 +33\\.45 +30\\.62 +1 +27\\.2% +58\\.1 MiB +0\\.1575|--model small --tp 2 --pp 2 --micro-batches 4 --gpus 8 ${pbench}"
      "predict_3d_tp_calls|    8  allreduce +activations \\(tp, 2 forward \\+ 2 backward per layer\\), 2 ranks +48 +192 KiB +ring +5\\.199|--model small --tp 2 --pp 2 --micro-batches 4 --gpus 8 ${pbench}"
      "predict_3d_pp_calls|    8  sendrecv +gradients \\(pp, backward\\) +4 +192 KiB +mpi +0\\.1733|--model small --tp 2 --pp 2 --micro-batches 4 --gpus 8 ${pbench}"
      "predict_3d_dp_calls|    8  allreduce +grads, dp 2 +1 +5\\.37 MiB +ring +2\\.823|--model small --tp 2 --pp 2 --micro-batches 4 --gpus 8 ${pbench}"
      "predict_3d_head_calls|    8  allreduce +head activations \\(tp, last stage\\), 2 ranks +4 +192 KiB +ring +0\\.4332|--model small --tp 2 --pp 2 --micro-batches 4 --gpus 8 ${pbench}"
      "predict_3d_xent_calls|    8  allreduce +cross-entropy row sums \\(tp\\), 2 ranks +8 +512 B +ring +0\\.08205|--model small --tp 2 --pp 2 --micro-batches 4 --gpus 8 ${pbench}"
      "predict_3d_embedding_call|    8  allreduce +embedding gradients \\(first and last stage\\) +1 +288 KiB +ring +0\\.1575|--model small --tp 2 --pp 2 --micro-batches 4 --gpus 8 ${pbench}"
      "predict_context|124\\.5 M parameters, 81\\.95 M per rank of the last stage|--model gpt2-124m --seq 128 --pp 2 --gpus 2 ${pbench}"
      "predict_3d_sp_calls|    8  allgather +activations \\(tp sequence parallel, 2 forward \\+ 2 backward per layer\\), 2 ranks +48 +192 KiB +ring +5\\.199|--model small --tp 2 --pp 2 --micro-batches 4 --sp --gpus 8 ${pbench}"
      "predict_3d_sp_pp_calls|    8  sendrecv +gradients \\(pp, backward\\) +4 +96 KiB|--model small --tp 2 --pp 2 --micro-batches 4 --sp --gpus 8 ${pbench}"
      "predict_accumulation|    2  \\(2,1,1\\) +73\\.08 +0 +0 +0 +0% +10\\.85 +83\\.94 +73\\.08 +1 +12\\.9% +196 MiB|--model small --micro-batches 4 --gpus 2 ${pbench}"
      "predict_bubble_3_11|Bubble \\(pp - 1\\)/\\(M \\+ pp - 1\\) = 3/11 = 27\\.27% of the pipeline's time|--layers 8 --dim 256 --heads 4 --seq 128 --pp 4 --micro-batches 8 --gpus 4,8 ${pbench}"
      "predict_bubble_column|    8  \\(2,1,4\\) +10\\.47 +0 +0\\.2737 +4\\.029 +27\\.27% +1\\.583 +16\\.35|--layers 8 --dim 256 --heads 4 --seq 128 --pp 4 --micro-batches 8 --gpus 4,8 ${pbench}"
      "predict_p2p_without_sendrecv|priced with the bench's allreduce fit carried to 2 ranks, as the file has no sendrecv|--model small --pp 2 --gpus 2 --bench ${syn}/ties.h5 --flops 1e12")
  # A layout that does not fit: one line, exit 2.
  foreach(case
      "gpus_not_multiple|^commscope-report: --gpus 6 is not a multiple of --tp x --pp = 2 x 2 = 4$|--model small --tp 2 --pp 2 --gpus 8,6"
      "pp_not_dividing|^commscope-report: --pp 4 does not divide the 6 layers$|--model small --pp 4 --gpus 8"
      "tp_not_dividing|^commscope-report: --tp 4 does not divide the 6 heads$|--model small --tp 4 --gpus 8"
      "tp_zero|--tp: Value 0 not in range|--model small --tp 0 --gpus 8"
      "micro_batches_zero|--micro-batches: Value 0 not in range|--model small --micro-batches 0 --gpus 8")
    string(REPLACE "|" ";" parts "${case}")
    list(GET parts 0 name)
    list(GET parts 1 regex)
    list(GET parts 2 args)
    separate_arguments(args)
    add_test(NAME analysis.report.bad.predict_${name}
             COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/one_line_error.sh "${regex}" -- ${report} predict ${args} ${pbench_args})
    set_tests_properties(analysis.report.bad.predict_${name} PROPERTIES FIXTURES_REQUIRED synthetic_bench LABELS "unit")
  endforeach()
  # Without --tp, --pp and --micro-batches (or with all three 1) predict prints what it printed
  # before they existed: tests/data/predict-before holds the CSV files of the earlier
  # commscope-report for these command lines; the new columns aside, every cell is the same.
  foreach(case
      "z0|--model small --gpus 2,4,8,64 --zero 0"
      "z0_explicit|--model small --gpus 2,4,8,64 --zero 0 --tp 1 --pp 1 --micro-batches 1"
      "z2|--model 125m --gpus 2,8,64 --zero 2 --batch 4"
      "z3|--layers 8 --dim 512 --heads 8 --seq 128 --gpus 3,16 --zero 3 --bytes-per-param 4")
    string(REPLACE "|" ";" parts "${case}")
    list(GET parts 0 name)
    list(GET parts 1 args)
    separate_arguments(args)
    string(REGEX REPLACE "_explicit$" "" before ${name})
    add_test(NAME analysis.report.predict_unchanged_${name}
             COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/predict_unchanged.sh ${rdir}/predict_unchanged_${name}
                     ${CMAKE_CURRENT_SOURCE_DIR}/tests/data/predict-before/${before} ${report} ${args} ${pbench_args})
    set_tests_properties(analysis.report.predict_unchanged_${name} PROPERTIES FIXTURES_REQUIRED synthetic_bench LABELS "unit")
  endforeach()
  add_test(NAME analysis.report.predict_3d_outputs
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/report_outputs.sh ${rdir}/predict_3d ${report} ${check} predict --model small --tp 2 --pp 2 --micro-batches 4 --gpus 8,16
                   ${pbench_args})
  set_tests_properties(analysis.report.predict_3d_outputs PROPERTIES FIXTURES_REQUIRED synthetic_bench LABELS "unit")
  # The verdicts against a recorded machine model end to end (tests/synthetic_verdicts.cpp writes
  # the files, tests/verdicts_end_to_end.sh works out every figure by hand and compares the
  # report's Verdict lines and CSV cells to the printed digit).
  add_executable(test_analysis_synthetic_verdicts tests/synthetic_verdicts.cpp)
  target_link_libraries(test_analysis_synthetic_verdicts PRIVATE commscope::formats commscope::model commscope::common
                                                                 commscope_build_flags)
  target_include_directories(test_analysis_synthetic_verdicts PRIVATE ${PROJECT_SOURCE_DIR}/model/tests)
  add_test(NAME analysis.report.verdicts_known_answers
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/verdicts_end_to_end.sh $<TARGET_FILE:test_analysis_synthetic_verdicts>
                   ${report} ${rdir}/verdicts_known_answers)
  set_tests_properties(analysis.report.verdicts_known_answers PROPERTIES LABELS "unit" TIMEOUT 120)
  # commscope-report doctor on files with known faults (tests/synthetic_doctor.cpp): each fault
  # named, and nothing else; the heatmaps drawn.
  add_executable(test_analysis_synthetic_doctor tests/synthetic_doctor.cpp)
  target_link_libraries(test_analysis_synthetic_doctor PRIVATE commscope::formats commscope::model commscope_build_flags)
  set(sdoc ${fx}/synthetic-doctor)
  add_test(NAME analysis.synthetic_doctor COMMAND test_analysis_synthetic_doctor ${sdoc})
  set_tests_properties(analysis.synthetic_doctor PROPERTIES FIXTURES_SETUP synthetic_doctor LABELS "unit")
  set(findings ${PROJECT_SOURCE_DIR}/scripts/tests/doctor-findings.sh)
  foreach(case
      "clean|none"
      "slow_host|slow host links: host3"
      "slow_link|slow link: host2 <-> host5"
      "one_way|slow link: host1 <-> host4"
      "slow_node|slow node: host4: sgemm"
      "high_latency|high-latency host links: host6"
      "cut_short|none"
      "oversubscribed|slow host links: host3"
      "probes_shared|none"
      "three_hosts_slow_host|slow host links: host1"
      "three_hosts_slow_link|slow link: host2 <-> host3"
      "gpu_clean|none"
      "gpu_faults|slow GPU: host2 rank 13 GPU 5 (0000:68:00.0)|slow peer link: host1 GPU 2 <-> GPU 6"
      "gpu_host_link|slow GPU host link: host1 rank 3 GPU 3 (0000:48:00.0)")
    string(REPLACE "|" ";" parts "${case}")
    list(GET parts 0 name)
    list(SUBLIST parts 1 -1 want)
    add_test(NAME analysis.report.doctor_${name} COMMAND ${findings} ${report} ${sdoc}/${name}.h5 ${want})
    set_tests_properties(analysis.report.doctor_${name} PROPERTIES FIXTURES_REQUIRED synthetic_doctor LABELS "unit")
  endforeach()
  add_test(NAME analysis.report.doctor_outputs
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/report_outputs.sh --nonempty pairs_bandwidth.svg --nonempty findings.csv
                   ${rdir}/doctor ${report} ${check} doctor ${sdoc}/slow_host.h5)
  # The heatmaps' colours start at 0 (a 3% spread is not drawn as bad against good), the title
  # states the values' range.
  add_test(NAME analysis.report.doctor_heatmap_from_zero
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/doctor_heatmap_from_zero.sh ${rdir}/doctor_heatmap ${report}
                   ${sdoc}/clean.h5)
  # A CPU run's file (no /gpus, no /peers) reports as before: no word of GPUs.
  add_test(NAME analysis.report.doctor_cpu_file_no_gpus
           COMMAND sh -c "out=$(\"$0\" doctor \"$1\" 2>&1) || exit 1; if printf '%s' \"$out\" | grep -n GPU; then exit 1; fi"
                   ${report} ${sdoc}/clean.h5)
  # A GPU run's file: its GPUs' table with each rate's share of its peak, and each node's peer matrix.
  add_test(NAME analysis.report.doctor_gpu_tables
           COMMAND ${PROJECT_SOURCE_DIR}/bench/tests/expect.sh 0 "Peer copies on host2: both ways at once" 0 --
                   ${report} doctor ${sdoc}/gpu_faults.h5)
  add_test(NAME analysis.report.doctor_oversubscribed_said
           COMMAND ${PROJECT_SOURCE_DIR}/bench/tests/expect.sh 0 "Latency is not judged: ranks outnumber CPUs \\(hosts host1" 0 --
                   ${report} doctor ${sdoc}/oversubscribed.h5)
  # 2 ranks on one host: 1 link, 2 probes, 1 node, fewer than the 3 values the rule needs of a kind.
  add_test(NAME analysis.report.doctor_cannot_judge
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/doctor_cannot_judge.sh ${report} ${sdoc}/one_host.h5)
  add_test(NAME analysis.report.doctor_probes_shared_said
           COMMAND ${PROJECT_SOURCE_DIR}/bench/tests/expect.sh 0 "Probes are not judged: other work shared their CPUs" 0 --
                   ${report} doctor ${sdoc}/probes_shared.h5)
  add_test(NAME analysis.report.doctor_cut_short_said
           COMMAND ${PROJECT_SOURCE_DIR}/bench/tests/expect.sh 0 "Run cut short \\(no status" 0 -- ${report} doctor ${sdoc}/cut_short.h5)
  add_test(NAME analysis.report.doctor_bench_file
           COMMAND ${PROJECT_SOURCE_DIR}/bench/tests/expect.sh 2 "is a commscope bench results file, not a doctor file" 0 --
                   ${report} doctor ${syn}/run1.h5)
  add_test(NAME analysis.report.bench_doctor_file
           COMMAND ${PROJECT_SOURCE_DIR}/bench/tests/expect.sh 2 "is a commscope doctor file, not a bench results file" 0 --
                   ${report} bench ${sdoc}/clean.h5)
  set_tests_properties(analysis.report.doctor_outputs analysis.report.doctor_cut_short_said
                       analysis.report.doctor_heatmap_from_zero
                       analysis.report.doctor_oversubscribed_said analysis.report.doctor_probes_shared_said
                       analysis.report.doctor_cannot_judge analysis.report.doctor_cpu_file_no_gpus
                       analysis.report.doctor_gpu_tables
                       analysis.report.doctor_bench_file analysis.report.bench_doctor_file
                       PROPERTIES FIXTURES_REQUIRED "synthetic_doctor;synthetic_bench" LABELS "unit" TIMEOUT 120)
  # Without gnuplot (GPU nodes often lack it) the report still writes its text, CSV files and
  # plot scripts, says which plots are left to draw, and exits 0.
  add_test(NAME analysis.report.no_gnuplot
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/no_gnuplot.sh ${rdir}/no_gnuplot ${report} ${fx}/bench-np2.h5)
  set_tests_properties(analysis.report.no_gnuplot PROPERTIES FIXTURES_REQUIRED report_fixtures LABELS "unit" TIMEOUT 120)
  # What a reader sees: sizes in the CSV files as numbers of bytes (the text form only in the
  # terminal and Markdown), the files counted as written, whole ranks on the speedup plot.
  add_test(NAME analysis.report.readable_csv_bytes
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/csv_bytes.sh ${rdir}/bench_synthetic)
  set_tests_properties(analysis.report.readable_csv_bytes PROPERTIES
                       FIXTURES_REQUIRED "synthetic_bench;report_out_bench_synthetic" LABELS "unit")
  add_test(NAME analysis.report.readable_wrote_counts
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/wrote_counts.sh ${rdir}/wrote_counts ${report} ${syn}/ties.h5)
  set_tests_properties(analysis.report.readable_wrote_counts PROPERTIES FIXTURES_REQUIRED synthetic_bench LABELS "unit")
  add_test(NAME analysis.report.readable_speedup_ticks
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/speedup_ticks.sh ${rdir}/scaling)
  set_tests_properties(analysis.report.readable_speedup_ticks PROPERTIES
                       FIXTURES_REQUIRED "report_fixtures;report_out_scaling" LABELS "unit")
  # Two layouts of 4 ranks: drawn apart on the speedup plot (a line joined them with a vertical
  # segment), every bar naming its layout.
  add_test(NAME analysis.report.readable_layouts COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/layouts_plotted.sh
                                                         ${rdir}/scaling_3d)
  set_tests_properties(analysis.report.readable_layouts PROPERTIES
                       FIXTURES_REQUIRED "report_fixtures;report_out_scaling_3d" LABELS "unit")
  # The reports' numbers against the HDF5 files, read independently with h5py
  # (scripts/check-report.py); one mismatched pair must be caught. Skipped without h5py.
  set(check_report ${PROJECT_SOURCE_DIR}/scripts/check-report.py)
  if(COMMSCOPE_H5PY_PYTHON)
    set(run_check ${COMMSCOPE_H5PY_PYTHON} ${check_report})
  else()
    set(run_check bash -c "echo 'no python3 with h5py (Debian: python3-h5py): skipped'; exit 77")
  endif()
  foreach(case
      "bench_np2|bench ${fx}/bench-np2.h5 ${rdir}/bench_np2"
      "bench_np4|bench ${fx}/bench-np4.h5 ${rdir}/bench_np4"
      "bench_cuda_h100|bench ${PROJECT_SOURCE_DIR}/analysis/tests/data/bench-cuda-h100-np1.h5 ${rdir}/bench_cuda_h100"
      "bench_synthetic|bench ${syn}/ties.h5 ${rdir}/bench_synthetic"
      "bench_runs|bench ${syn}/run1.h5 ${syn}/run2.h5 ${syn}/run3.h5 ${rdir}/bench_runs"
      "bench_stalled|bench ${syn}/stalled.h5 ${rdir}/bench_stalled"
      "profile_np2|profile ${fx}/train-np2.h5 ${rdir}/profile_np2"
      "scaling|scaling ${fx}/train-np1.h5 ${fx}/train-np2.h5 ${fx}/train-np4.h5 ${rdir}/scaling"
      "scaling_3d|scaling ${fx}/train-np1.h5 ${fx}/train-np4.h5 ${fx}/train3d-np4.h5 ${rdir}/scaling_3d"
      "scaling_same_cores|scaling ${fx}/train-np1-t2.h5 ${fx}/train-np2.h5 ${rdir}/scaling_same_cores")
    string(REPLACE "|" ";" parts "${case}")
    list(GET parts 0 name)
    list(GET parts 1 args)
    separate_arguments(args)
    add_test(NAME analysis.check_report.${name} COMMAND ${run_check} ${args})
    # The report folder it checks is analysis.report.NAME's (its fixture report_out_NAME).
    set_tests_properties(analysis.check_report.${name} PROPERTIES
                         FIXTURES_REQUIRED "report_fixtures;synthetic_bench;report_out_${name}" LABELS "unit"
                         SKIP_RETURN_CODE 77)
  endforeach()
  if(COMMSCOPE_H5PY_PYTHON)
    set(run_check ${PROJECT_SOURCE_DIR}/bench/tests/expect.sh 1 "values differ" 0 -- ${run_check})
  endif()
  add_test(NAME analysis.check_report.mismatch_caught COMMAND ${run_check} bench ${fx}/bench-np4.h5 ${rdir}/bench_np2)
  set_tests_properties(analysis.check_report.mismatch_caught PROPERTIES
                       FIXTURES_REQUIRED "report_fixtures;report_out_bench_np2" LABELS "unit" SKIP_RETURN_CODE 77)
  # The operator table's columns add up to total_ms (host_ms inclusive: other_ms holds the nested operators).
  add_test(NAME analysis.report.profile_operators_add_up
           COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/tests/operators_add_up.py ${rdir}/profile_np2)
  set_tests_properties(analysis.report.profile_operators_add_up PROPERTIES
                       FIXTURES_REQUIRED "report_fixtures;report_out_profile_np2" LABELS "unit")
  add_test(NAME analysis.report.trace
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/trace_has_events.sh ${report} ${fx}/train-np2.h5
                   ${CMAKE_CURRENT_BINARY_DIR}/trace-np2.json)
  set_tests_properties(analysis.report.trace PROPERTIES FIXTURES_REQUIRED report_fixtures LABELS "unit" TIMEOUT 60)
  # Scaling judges only what the runs can show. 1 rank x 2 threads against 2 ranks x 1 thread:
  # the same cores, said in the report, parallel efficiency per core, and no communication
  # efficiency or prediction from a baseline that communicates with no one (check_report
  # scaling_same_cores verifies the numbers). Runs of another workload are refused (the bad
  # cases below) unless --allow-mixed, which the report then states; an imported PyTorch trace
  # against the trainer's profile is another workload.
  add_test(NAME analysis.report.scaling_same_cores
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/scaling_same_cores.sh ${rdir}/scaling_same_cores ${report}
                   ${fx}/train-np1-t2.h5 ${fx}/train-np2.h5)
  add_test(NAME analysis.report.scaling_allow_mixed
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/scaling_allow_mixed.sh ${rdir}/scaling_allow_mixed ${report}
                   ${fx}/train-np1-l3.h5 ${fx}/train-np2.h5)
  # The report's times are ms and say so; with --bench each part of the step against its
  # prediction with its own error and the measured rest (the numbers: check_report.scaling_3d).
  add_test(NAME analysis.report.scaling_parts
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/scaling_parts.sh ${rdir}/scaling_parts ${report} ${fx}/bench-np4.h5
                   ${fx}/train-np1.h5 ${fx}/train-np4.h5 ${fx}/train3d-np4.h5)
  # Cores counted from where the ranks ran: 4 ranks on the 4 hosts of an emulated cluster on one
  # 2-CPU machine had 2 cores, not 8; a file without the placement by its attributes, said so.
  add_test(NAME analysis.report.scaling_shared_machine
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/scaling_shared_machine.sh "${COMMSCOPE_H5PY_PYTHON}" ${check_report}
                   ${rdir}/scaling_shared_machine ${report} ${fx}/train-np1.h5 ${fx}/train-np4.h5)
  set(vit ${PROJECT_SOURCE_DIR}/../shared/data/kineto)
  add_test(NAME analysis.report.bad.scaling_trainer_against_import
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/scaling_refuses_import.sh $<TARGET_FILE:commscope-import> ${vit}
                   ${CMAKE_CURRENT_BINARY_DIR}/vit-np2.h5 ${PROJECT_SOURCE_DIR}/bench/tests/expect.sh ${report}
                   ${fx}/train-np1.h5)
  # An imported PyTorch trace's collectives are grouped by the process group the trace recorded
  # (the call's, which its NCCL kernels share), not put in "dp and others".
  add_test(NAME analysis.report.profile_import_process_groups
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/import_process_groups.sh $<TARGET_FILE:commscope-import> ${vit}
                   ${CMAKE_CURRENT_BINARY_DIR}/resnet-np1.h5 ${report})
  # An imported GPU trace's operator table adds up with no large negative (vit128's aten::mm: its
  # kernels run after its host scope; other_ms is the scope's time outside its own work).
  add_test(NAME analysis.report.profile_import_operators_add_up
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/import_operators_add_up.sh $<TARGET_FILE:commscope-import> ${vit}
                   ${CMAKE_CURRENT_BINARY_DIR}/vit-operators ${report})
  set_tests_properties(analysis.report.scaling_same_cores analysis.report.scaling_allow_mixed
                       analysis.report.bad.scaling_trainer_against_import analysis.report.profile_import_process_groups
                       analysis.report.profile_import_operators_add_up analysis.report.scaling_parts
                       analysis.report.scaling_shared_machine
                       PROPERTIES FIXTURES_REQUIRED report_fixtures LABELS "unit" TIMEOUT 120 SKIP_RETURN_CODE 77)
  set_tests_properties(analysis.report.scaling_same_cores PROPERTIES FIXTURES_SETUP report_out_scaling_same_cores)

  # predict prices only what can run and says what it extrapolates: from a one-node bench of 4
  # ranks no shm or hier for groups of 8 and more (the calls' notes say they were left out),
  # every size beyond the bench's 32 KiB noted, a CPU bench with a GPU's --flops warned about in
  # the summary; without --bench the compute and memory alone, communication "-"; a bench
  # without a collective the step needs: one line and nothing printed before it.
  add_test(NAME analysis.report.predict_valid_algorithms
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/predict_valid_algorithms.sh ${rdir}/predict_valid_algorithms ${report}
                   ${fx}/bench-np4.h5)
  add_test(NAME analysis.report.predict_without_bench
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/predict_without_bench.sh ${rdir}/predict_without_bench ${report})
  add_test(NAME analysis.report.bad.predict_checks_before_printing
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/one_line_error.sh "has no reducescatter measurements" -- ${report}
                   predict --model 125m --gpus 8 --zero 1 --bench ${syn}/ties.h5 --flops 1e12)
  set_tests_properties(analysis.report.predict_valid_algorithms analysis.report.predict_without_bench
                       analysis.report.bad.predict_checks_before_printing
                       PROPERTIES FIXTURES_REQUIRED "report_fixtures;synthetic_bench" LABELS "unit" TIMEOUT 120)

  # A misspelt subcommand is named with the valid ones (CLI11 said "A subcommand is required").
  add_test(NAME analysis.report.bad.unknown_subcommand
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/one_line_error.sh
                   "^commscope-report: unknown subcommand 'benchh' \\(one of: bench, compare, profile, scaling, predict, trace, doctor, replay, hang; see --help\\)$"
                   -- ${report} benchh r.h5)
  set_tests_properties(analysis.report.bad.unknown_subcommand PROPERTIES LABELS "unit")
  # The usage line names the program, however it was run (it printed the path: bin/commscope-report).
  add_test(NAME analysis.report.predict_usage_names_program
           COMMAND ${CMAKE_SOURCE_DIR}/bench/tests/expect.sh 0 "^Usage: commscope-report predict \\[OPTIONS\\]" 0 --
                   ${report} predict --help)
  set_tests_properties(analysis.report.predict_usage_names_program PROPERTIES LABELS "unit")

  # Random command lines: status 0, or 2 with one line; never a crash or a hang.
  add_test(NAME analysis.fuzz_args
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/tests/fuzz_args.sh ${report} ${fx} ${CMAKE_CURRENT_BINARY_DIR}/fuzz_args 300)
  set_tests_properties(analysis.fuzz_args PROPERTIES FIXTURES_REQUIRED report_fixtures LABELS "unit" TIMEOUT 600)
  # A damaged file that sends HDF5 into an endless loop: one line, exit 2, after the read time limit.
  set(looping ${CMAKE_CURRENT_SOURCE_DIR}/tests/looping_heap.sh)
  add_test(NAME analysis.report.bad.looping_heap_bench
           COMMAND ${looping} ${fx}/bench-np2.h5 ${CMAKE_CURRENT_BINARY_DIR}/looping ${report} bench FILE)
  add_test(NAME analysis.report.bad.looping_heap_profile
           COMMAND ${looping} ${fx}/train-np2.h5 ${CMAKE_CURRENT_BINARY_DIR}/looping ${report} profile FILE)
  add_test(NAME commscope-trace.looping_heap
           COMMAND ${looping} ${fx}/train-np1.h5 ${CMAKE_CURRENT_BINARY_DIR}/looping $<TARGET_FILE:commscope-trace>
                   FILE -o ${CMAKE_CURRENT_BINARY_DIR}/looping/trace.json)
  set_tests_properties(analysis.report.bad.looping_heap_bench analysis.report.bad.looping_heap_profile
                       commscope-trace.looping_heap PROPERTIES FIXTURES_REQUIRED report_fixtures LABELS "unit" TIMEOUT 120)
  # Bad or foreign input: one line, exit 2.
  set(expect ${PROJECT_SOURCE_DIR}/bench/tests/expect.sh)
  foreach(case
      "missing|no such file|bench /no/such/file.h5"
      "not_hdf5|${CMAKE_CURRENT_SOURCE_DIR}|bench ${CMAKE_CURRENT_SOURCE_DIR}/README.md"
      "profile_as_bench|profile|bench ${fx}/train-np2.h5"
      "bench_as_profile|bench|profile ${fx}/bench-np2.h5"
      "no_subcommand|subcommand|"
      "bad_gpus|not a rank count|predict --model 125m --gpus 8,x --bench ${fx}/bench-np2.h5 --flops 1e12"
      "bad_model|unknown|predict --model 9b --gpus 8 --bench ${fx}/bench-np2.h5 --flops 1e12"
      "scaling_one|required|scaling ${fx}/train-np2.h5"
      "bad_zero|--zero|predict --model 125m --gpus 8 --bench ${fx}/bench-np2.h5 --flops 1e12 --zero 7"
      "negative_flops|--flops|predict --model 125m --gpus 8 --bench ${fx}/bench-np2.h5 --flops -1"
      "trace_without_out|--out is required|trace ${fx}/train-np2.h5"
      "compare_one|required|compare ${fx}/bench-np2.h5"
      "predict_sp_without_tp|--sp needs --tp 2|predict --model small --sp --gpus 8 --bench ${fx}/bench-np2.h5 --flops 1e12"
      "profile_two_files|not expected|profile ${fx}/train-np2.h5 ${fx}/train-np1.h5"
      "predict_one_rank_bench|needs a bench run|predict --model 125m --gpus 8 --bench ${fx}/bench-np1.h5 --flops 1e12"
      "predict_partial_shape|--layers --dim|predict --layers 4 --gpus 8 --bench ${fx}/bench-np2.h5 --flops 1e12"
      "scaling_same_ranks|the same rank count|scaling ${fx}/train-np2.h5 ${fx}/train-np2.h5"
      "scaling_bench_one_rank|needs a bench run on 2|scaling ${fx}/train-np1.h5 ${fx}/train-np2.h5 --bench ${fx}/bench-np1.h5"
      "scaling_bench_is_profile|bench|scaling ${fx}/train-np1.h5 ${fx}/train-np2.h5 --bench ${fx}/train-np2.h5"
      "scaling_bad_flops|--flops|scaling ${fx}/train-np1.h5 ${fx}/train-np2.h5 --bench ${fx}/bench-np2.h5 --flops 0"
      "scaling_mixed_models|train-np2.h5: another workload than .*train-np1-l3.h5 .*--allow-mixed|scaling ${fx}/train-np1-l3.h5 ${fx}/train-np2.h5"
      "bench_twice|given twice|bench ${fx}/bench-np2.h5 ${fx}/bench-np2.h5"
      "bench_other_configuration|pools runs of one configuration|bench ${fx}/bench-np2.h5 ${fx}/bench-np4.h5"
      "hang_missing|not a folder of flight records|hang /no/such/folder"
      "hang_empty|no flight records|hang ${CMAKE_CURRENT_SOURCE_DIR}/include"
      "hang_bad_record|bad.flight:1: not a commscope flight record|hang ${CMAKE_CURRENT_SOURCE_DIR}/tests/data/hang-bad")
    string(REPLACE "|" ";" parts "${case}")
    list(GET parts 0 name)
    list(GET parts 1 regex)
    list(LENGTH parts n)
    set(args "")
    if(n GREATER 2)
      list(GET parts 2 args)
      separate_arguments(args)
    endif()
    add_test(NAME analysis.report.bad.${name} COMMAND ${expect} 2 "${regex}" 0 -- ${report} ${args})
    set_tests_properties(analysis.report.bad.${name} PROPERTIES FIXTURES_REQUIRED report_fixtures LABELS "unit")
  endforeach()
  # scaling with a run of uneven stages (tests/scaling_uneven.sh): as the baseline it is listed
  # without a prediction while the others are predicted; beside a baseline of its rank count in
  # another layout, it gets its prediction error.
  add_test(NAME analysis.report.scaling_uneven_stages.np2
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/scaling_uneven.sh $<TARGET_FILE:commscope-train> ${report} ${fx}
                   ${rdir}/scaling_uneven ${PROJECT_SOURCE_DIR}/trainer/tests/data/tiny.txt -- ${MPIEXEC_EXECUTABLE}
                   ${COMMSCOPE_MPIEXEC_FLAGS} ${MPIEXEC_NUMPROC_FLAG})
  set_tests_properties(analysis.report.scaling_uneven_stages.np2 PROPERTIES FIXTURES_REQUIRED report_fixtures
                       LABELS "mpi" PROCESSORS 2 TIMEOUT 120 ENVIRONMENT "${COMMSCOPE_TEST_ENV};OMP_NUM_THREADS=1")
  # Who a pipeline's receives wait for (tests/pp_waiting.sh): a profile of pp 2 at 2 ranks, whose
  # receive waits the report sets against the sending stage's rank, in waiting_for.csv and in words.
  add_test(NAME analysis.report.pp_waiting.np2
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/pp_waiting.sh $<TARGET_FILE:commscope-train> ${report}
                   ${fx}/bench-np2.h5 ${rdir}/pp_waiting ${PROJECT_SOURCE_DIR}/trainer/tests/data/tiny.txt -- ${MPIEXEC_EXECUTABLE}
                   ${COMMSCOPE_MPIEXEC_FLAGS} ${MPIEXEC_NUMPROC_FLAG})
  set_tests_properties(analysis.report.pp_waiting.np2 PROPERTIES FIXTURES_REQUIRED report_fixtures
                       LABELS "mpi" PROCESSORS 2 TIMEOUT 120 ENVIRONMENT "${COMMSCOPE_TEST_ENV};OMP_NUM_THREADS=1")
  # The machine model a profile records (tests/train_machine_model.sh): commscope-train
  # --machine-probe at 2 ranks, its replay with --gaps none, and commscope-report profile --alone
  # prices the step's collectives on the profile's model, no bench file given.
  add_test(NAME analysis.report.train_machine_model.np2
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/train_machine_model.sh $<TARGET_FILE:commscope-train>
                   $<TARGET_FILE:commscope-replay> ${report} ${rdir}/train_machine_model
                   ${PROJECT_SOURCE_DIR}/trainer/tests/data/tiny.txt -- ${MPIEXEC_EXECUTABLE} ${COMMSCOPE_MPIEXEC_FLAGS}
                   ${MPIEXEC_NUMPROC_FLAG})
  set_tests_properties(analysis.report.train_machine_model.np2 PROPERTIES LABELS "mpi" PROCESSORS 2 TIMEOUT 120
                       ENVIRONMENT "${COMMSCOPE_TEST_ENV};OMP_NUM_THREADS=1")
  # scaling --bench checks the bench and every run before it writes anything: one line, no
  # partial report (it printed the scaling tables before failing on the bench).
  add_test(NAME analysis.report.bad.scaling_bench_one_line
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/one_line_error.sh "needs a bench run on 2" -- ${report} scaling
                   ${fx}/train-np1.h5 ${fx}/train-np2.h5 --bench ${fx}/bench-np1.h5)
  set_tests_properties(analysis.report.bad.scaling_bench_one_line PROPERTIES FIXTURES_REQUIRED report_fixtures
                                                                            LABELS "unit")
  # The subcommands' pieces on made-up inputs: replay's counts per communicator, from each file's
  # own events; the step's communication summary in words.
  commscope_add_unit_test(NAME analysis.report_unit TARGET test_analysis_report
                          SOURCES tests/test_replay_compare.cpp tests/test_step_communication.cpp LINK commscope_report
                          INCLUDES ${CMAKE_CURRENT_SOURCE_DIR}/src/report)
endif()
