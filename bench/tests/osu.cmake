# OSU's point-to-point tests (included from CMakeLists.txt: expect, mpirun, bench as there).
commscope_add_unit_test(NAME bench.osu.unit TARGET test_bench_osu SOURCES test_osu.cpp LINK commscope_bench_core)

set(osu_columns ${CMAKE_CURRENT_SOURCE_DIR}/osu_columns.sh)
set(bindir $<TARGET_FILE_DIR:commscope-bench>)
# osu_test(NAME name RANKS n TITLE title FIELDS f MIN m MAX M ARGS command...): a script written
# for OSU reads the output of `command` under mpirun by OSU's columns.
function(osu_test)
  cmake_parse_arguments(T "" "NAME;RANKS;TITLE;FIELDS;MIN;MAX" "ARGS" ${ARGN})
  add_test(NAME ${T_NAME} COMMAND ${osu_columns} "${T_TITLE}" ${T_FIELDS} ${T_MIN} ${T_MAX} -- ${mpirun} ${T_RANKS}
                                  ${T_ARGS})
  set_tests_properties(${T_NAME} PROPERTIES ENVIRONMENT "${COMMSCOPE_TEST_ENV}" LABELS "mpi" PROCESSORS 2 TIMEOUT 300)
endfunction()

# Each test under its binary's name (a link to commscope-bench) and as commscope-bench's first
# argument, with OSU's flags: -m MIN:MAX -i -x, -W for the windowed ones, -f.
foreach(spec "osu_latency:Latency Test:2" "osu_bw:Bandwidth Test:2" "osu_bibw:Bi-Directional Bandwidth Test:2")
  string(REPLACE ":" ";" spec "${spec}")
  list(GET spec 0 name)
  list(GET spec 1 title)
  list(GET spec 2 fields)
  set(window)
  if(NOT name STREQUAL osu_latency)
    set(window -W 8)
  endif()
  osu_test(NAME bench.osu.binary.${name}.np2 RANKS 2 TITLE "${title}" FIELDS ${fields} MIN 1 MAX 64
           ARGS ${bindir}/${name} -m 1:64 -i 20 -x 2 ${window})
  osu_test(NAME bench.osu.name.${name}.np2 RANKS 2 TITLE "${title}" FIELDS ${fields} MIN 4 MAX 16384
           ARGS ${bench} ${name} --message-size 4:16384 --iterations 10 --warmup 1 ${window})
  # -f: min, max and the iteration count after the value.
  osu_test(NAME bench.osu.full.${name}.np2 RANKS 2 TITLE "${title}" FIELDS 5 MIN 1 MAX 8
           ARGS ${bindir}/${name} -m 1:8 -i 10 -x 1 -f)
endforeach()
# -m MAX alone: osu_latency starts at 0 B as OSU's does.
osu_test(NAME bench.osu.latency_from_zero.np2 RANKS 2 TITLE "Latency Test" FIELDS 2 MIN 0 MAX 16
         ARGS ${bindir}/osu_latency -m 16 -i 10)
# osu_mbw_mr: pairs of ranks (4 ranks: 2 pairs), MB/s and Messages/s; -R 0 drops the rate.
osu_test(NAME bench.osu.binary.osu_mbw_mr.np4 RANKS 4 TITLE "Multiple Bandwidth / Message Rate Test" FIELDS 3 MIN 1
         MAX 64 ARGS ${bindir}/osu_mbw_mr -m 1:64 -i 10 -x 1 -W 16)
commscope_bench_test(NAME bench.osu.mbw_mr_pairs.np4 RANKS 4 RC 0
                     REGEX "# \\[ pairs: 2 \\] \\[ window size: 16 \\]\n.*\n# Size +MB/s +Messages/s" MAX_S 0
                     ARGS osu_mbw_mr -m 1:8 -i 5 -W 16)
osu_test(NAME bench.osu.mbw_mr_no_rate.np3 RANKS 3 TITLE "Multiple Bandwidth / Message Rate Test" FIELDS 2 MIN 2
         MAX 8 ARGS ${bindir}/osu_mbw_mr -m 2:8 -i 5 -R 0 -p 1)

# OSU's -T and -c on the point-to-point tests (they were "not expected"): the datatype's sizes
# (mpi_float from 4 B), a Validation column saying Pass; -f too.
osu_test(NAME bench.osu.type_check.osu_latency.np2 RANKS 2 TITLE "Latency Test" FIELDS 3 MIN 4 MAX 64
         ARGS ${bindir}/osu_latency -T mpi_float -c -m 1:64 -i 10 -x 2)
osu_test(NAME bench.osu.type_check.osu_bw.np2 RANKS 2 TITLE "Bandwidth Test" FIELDS 6 MIN 4 MAX 64
         ARGS ${bench} osu_bw --type MPI_INT --validation -u 1 -m 4:64 -i 5 -x 1 -W 4 -f)
osu_test(NAME bench.osu.type_check.osu_mbw_mr.np4 RANKS 4 TITLE "Multiple Bandwidth / Message Rate Test" FIELDS 4
         MIN 1 MAX 16 ARGS ${bindir}/osu_mbw_mr -T mpi_char -c -m 1:16 -i 3 -x 1 -W 4)
osu_test(NAME bench.osu.type_check.osu_bibw.np2 RANKS 2 TITLE "Bi-Directional Bandwidth Test" FIELDS 3 MIN 4 MAX 16
         ARGS ${bindir}/osu_bibw -T mpi_float -c -m 4:16 -i 3 -x 1 -W 4)
# OSU's collective tests under their binaries' names (osu_allreduce was "unknown collective"):
# the library's mpi collective over OSU's sizes and counts, OSU's columns; -f adds min, max and
# iterations, -c the Validation column; 3 ranks (not a power of two) and a root of 2 for those
# that have one.
foreach(spec "osu_allreduce:Allreduce Latency Test" "osu_allgather:Allgather Latency Test"
             "osu_alltoall:All-to-All Personalized Exchange Latency Test" "osu_bcast:Broadcast Latency Test"
             "osu_gather:Gather Latency Test" "osu_reduce:Reduce Latency Test"
             "osu_reduce_scatter:Reduce_scatter Latency Test" "osu_scatter:Scatter Latency Test")
  string(REPLACE ":" ";" spec "${spec}")
  list(GET spec 0 name)
  list(GET spec 1 title)
  osu_test(NAME bench.osu.binary.${name}.np2 RANKS 2 TITLE "${title}" FIELDS 2 MIN 8 MAX 1024
           ARGS ${bindir}/${name} -m 8:1024 -i 10 -x 2)
  set(root)
  if(name MATCHES "osu_(gather|reduce|scatter)$")
    set(root -k fixed:2)
  endif()
  osu_test(NAME bench.osu.check.${name}.np3 RANKS 3 TITLE "${title}" FIELDS 6 MIN 16 MAX 256
           ARGS ${bench} ${name} -T mpi_float -c -f -m 16:256 -i 4 -x 1 ${root})
endforeach()
# A wrong element is Fail, OSU's closing line and exit status 1 (each receiver alters one).
commscope_bench_test(NAME bench.osu.check_fails.osu_allreduce.np2 RANKS 2 RC 1
                     REGEX "^DATA VALIDATION ERROR: osu_allreduce exited with status 1 on message size 1\\.$" MAX_S 0
                     ARGS osu_allreduce -c --debug-corrupt -m 1:4 -i 2 -x 0)
commscope_bench_test(NAME bench.osu.check_fails.osu_latency.np2 RANKS 2 RC 1 REGEX "^4 +[0-9.]+ +Fail$" MAX_S 0
                     ARGS osu_latency -c --debug-corrupt -T mpi_int -m 1:8 -i 2 -x 0)

# Bad input: one line, exit status 2, before anything is measured.
foreach(bad "osu_bw:-q:The following argument was not expected: -q \\(see -h\\)"
            "osu_latency:-i 0:-i must be >= 1" "osu_latency:-W 8:-W: osu_latency sends one message at a time"
            "osu_bibw:-m 64!8:-m 64!8: MIN is larger than MAX" "osu_bw:-d rocm:-d rocm! only cuda buffers"
            "osu_latency::needs exactly 2 ranks \\(have 1\\), as OSU's does"
            "osu_allreduce::needs at least 2 ranks \\(have 1\\), as OSU's does"
            "osu_latency:-T mpi_double:bad -T 'mpi_double' \\(mpi_char, mpi_int, mpi_float or all\\)"
            "osu_bcast:-d cuda:-d cuda! the collective tests run on host buffers here. on the device! commscope-bench broadcast --device cuda")
  string(REPLACE ":" ";" bad "${bad}")
  list(GET bad 0 name)
  list(GET bad 1 flags)
  list(GET bad 2 want)
  string(REPLACE "!" ":" flags "${flags}")
  string(REPLACE "!" ":" want "${want}")
  separate_arguments(flags)
  string(MAKE_C_IDENTIFIER "${name}${flags}" id)
  add_test(NAME bench.osu.usage.${id} COMMAND ${osu_columns} --usage "^${name}: ${want}" -- ${bindir}/${name} ${flags})
  set_tests_properties(bench.osu.usage.${id} PROPERTIES ENVIRONMENT "${COMMSCOPE_TEST_ENV}" LABELS "unit")
endforeach()
commscope_bench_test(NAME bench.osu.usage.three_ranks.np3 RANKS 3 RC 2 REGEX "^osu_bw: needs exactly 2 ranks \\(have 3\\)"
                     MAX_S 0 ARGS osu_bw)
commscope_bench_test(NAME bench.osu.help RC 0 REGEX "-m,--message-size" MAX_S 0 ARGS osu_latency -h)
# OSU's tests that are not here: one line naming the nearest one that is.
commscope_bench_test(NAME bench.osu.refused.osu_iallreduce RC 2
                     REGEX "^osu_iallreduce is non-blocking .*: osu_allreduce times the blocking one$" MAX_S 0
                     ARGS osu_iallreduce -m 8:64)
commscope_bench_test(NAME bench.osu.refused.osu_alltoallv RC 2 REGEX "^osu_alltoallv is not here: .*osu_alltoall" MAX_S 0
                     ARGS osu_alltoallv)
