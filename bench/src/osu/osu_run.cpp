#include "osu/osu_run.hpp"

#include <mpi.h>

#include <cstdio>
#include <string>

#include "commscope/collectives/error.hpp"
#include "commscope/collectives/mpi_transport.hpp"
#include "osu/osu_coll.hpp"
#include "osu/osu_device.hpp"
#include "osu/osu_options.hpp"
#include "osu/osu_pt2pt.hpp"
#include "osu/osu_report.hpp"
#include "watchdog.hpp"

namespace commscope::bench {

namespace {

// osu_mbw_mr's pairs; the others take exactly 2 ranks, as OSU's do.
int pairs_for(const OsuOptions& o, int nranks) {
  if (o.test != OsuTest::mbw_mr) {
    if (nranks != 2)
      throw InvalidArgument("needs exactly 2 ranks (have " + std::to_string(nranks) + "), as OSU's does");
    return 1;
  }
  if (nranks < 2) throw InvalidArgument("needs at least 2 ranks (have 1)");
  const int pairs = o.pairs ? o.pairs : nranks / 2;
  if (2 * pairs > nranks)
    throw InvalidArgument("-p " + std::to_string(pairs) + " pairs need " + std::to_string(2 * pairs) + " ranks (have " +
                          std::to_string(nranks) + ")");
  return pairs;
}

// Device buffers on this rank: senders take SRC, receivers DST.
bool on_device(const OsuOptions& o, int rank, int pairs) {
  if (!o.device) return false;
  return (rank < pairs ? o.src : o.dst) == 'D';
}

// The device set up on every rank, the first problem said alike everywhere.
void setup_device(const OsuOptions& o, MPI_Comm comm, int rank) {
  if (!o.device) return;
  MPI_Comm node;
  COMMSCOPE_MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
  int local = 0;
  MPI_Comm_rank(node, &local);
  MPI_Comm_free(&node);
  const std::string problem = osu_device_setup(local, o.src == 'D' || o.dst == 'D');
  int bad = !problem.empty(), any = 0;
  COMMSCOPE_MPI_CHECK(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm));
  if (any) throw InvalidArgument("-d cuda: " + (problem.empty() ? std::string("another rank has no device") : problem));
}

// After a size with wrong elements OSU stops; so does the run (exit status 1), after OSU's line.
int validation_failed(const OsuOptions& o, int rank, std::size_t bytes) {
  if (rank == 0) {
    const std::string_view name = to_string(o.test);
    std::printf("DATA VALIDATION ERROR: %.*s exited with status 1 on message size %zu.\n",
                static_cast<int>(name.size()), name.data(), bytes);
    std::fflush(stdout);
  }
  return 1;
}

int measure_pt2pt(const OsuOptions& o, MPI_Comm comm) {
  int rank = 0, nranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  const int pairs = pairs_for(o, nranks);
  setup_device(o, comm, rank);
  OsuBuffers buffers(o.max_bytes, on_device(o, rank, pairs));
  // A hang must end: a rank stuck in one size longer than --timeout says where and ends.
  Watchdog dog(o.timeout_s, rank);
  if (rank == 0) print_osu_header(stdout, o, nranks, pairs);
  for (OsuType type : o.types) {
    if (rank == 0) {
      print_osu_columns(stdout, o, type);
      std::fflush(stdout);
    }
    for (std::size_t bytes : o.sizes()) {
      if (bytes > 0 && bytes < type_size(type)) continue;  // no element: OSU leaves the size out
      const OsuLine line = osu_measure(o, type, pairs, bytes, buffers, comm, dog);
      if (rank == 0) {
        print_osu_line(stdout, o, line);
        std::fflush(stdout);
      }
      if (line.errors > 0) return validation_failed(o, rank, bytes);
    }
  }
  return 0;
}

int measure_collective(const OsuOptions& o, MPI_Comm world) {
  int rank = 0, nranks = 1;
  MPI_Comm_rank(world, &rank);
  MPI_Comm_size(world, &nranks);
  if (nranks < 2) throw InvalidArgument("needs at least 2 ranks (have 1), as OSU's does");
  if (o.root >= nranks)
    throw InvalidArgument("-k fixed:" + std::to_string(o.root) + ": root " + std::to_string(o.root) +
                          " is not a rank of " + std::to_string(nranks));
  const std::size_t largest = osu_largest_size(o, nranks);
  if (largest < o.max_bytes && rank == 0)
    std::fprintf(stderr, "%s: the largest size is %zu bytes: -M %zu bytes of buffers; raise -M for larger sizes\n",
                 std::string(to_string(o.test)).c_str(), largest, o.mem_limit);
  CommOptions options;
  options.timeout_s = o.timeout_s;
  Communicator comm(world, options);
  OsuCollBuffers buffers(o, nranks);
  Watchdog dog(o.timeout_s, rank);
  if (rank == 0) print_osu_header(stdout, o, nranks, 0);
  for (OsuType type : o.types) {
    if (rank == 0) {
      print_osu_columns(stdout, o, type);
      std::fflush(stdout);
    }
    for (std::size_t bytes : o.sizes()) {
      if (bytes > largest) break;
      const std::optional<OsuLine> line = osu_measure_collective(o, type, bytes, buffers, comm, dog);
      if (!line) continue;  // no element per rank
      if (rank == 0) {
        print_osu_line(stdout, o, *line);
        std::fflush(stdout);
      }
      if (line->errors > 0) return validation_failed(o, rank, bytes);
    }
  }
  return 0;
}

}  // namespace

bool osu_called(int argc, const char* const* argv) {
  auto osu = [](const char* name) { return osu_test_named(name) || !osu_refusal(name).empty(); };
  return (argc > 0 && osu(argv[0])) || (argc > 1 && osu(argv[1]));
}

int osu_main(int argc, const char* const* argv) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // `commscope-bench osu_bw ...`: the test's name stands for the program, as OSU's binary.
  if (!osu_test_named(argv[0]) && osu_refusal(argv[0]).empty()) {
    ++argv;
    --argc;
  }
  const std::optional<OsuTest> test = osu_test_named(argv[0]);
  if (!test) {  // an OSU test that is not here
    if (rank == 0) std::fprintf(stderr, "%s\n", osu_refusal(argv[0]).c_str());
    return 2;
  }
  const std::string name(to_string(*test));
  const OsuParse parsed = parse_osu_options(*test, argc, argv);
  if (parsed.exit_code >= 0) {
    if (rank == 0) std::fprintf(parsed.exit_code ? stderr : stdout, "%s\n", parsed.message.c_str());
    return parsed.exit_code;
  }
  try {
    if (is_collective(*test)) return measure_collective(parsed.options, MPI_COMM_WORLD);
    return measure_pt2pt(parsed.options, MPI_COMM_WORLD);
  } catch (const InvalidArgument& e) {
    if (rank == 0) std::fprintf(stderr, "%s: %s\n", name.c_str(), e.what());
    return 2;
  }
}

}  // namespace commscope::bench
