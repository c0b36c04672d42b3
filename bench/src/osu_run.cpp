#include "osu_run.hpp"

#include <mpi.h>

#include <cstdio>
#include <string>

#include "commscope/collectives/error.hpp"
#include "commscope/collectives/mpi_transport.hpp"
#include "osu_device.hpp"
#include "osu_options.hpp"
#include "osu_pt2pt.hpp"
#include "osu_report.hpp"
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

int measure_all(const OsuOptions& o, MPI_Comm comm) {
  int rank = 0, nranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  const int pairs = pairs_for(o, nranks);
  setup_device(o, comm, rank);
  OsuBuffers buffers(o.max_bytes, on_device(o, rank, pairs));
  // A hang must end: a rank stuck in one size longer than --timeout says where and ends.
  Watchdog dog(o.timeout_s, rank);
  if (rank == 0) {
    print_osu_header(stdout, o, nranks, pairs);
    std::fflush(stdout);
  }
  for (std::size_t bytes : o.sizes()) {
    const OsuLine line = osu_measure(o, pairs, bytes, buffers, comm, dog);
    if (rank == 0) {
      print_osu_line(stdout, o, line);
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace

bool osu_called(int argc, const char* const* argv) {
  return (argc > 0 && osu_test_named(argv[0])) || (argc > 1 && osu_test_named(argv[1]));
}

int osu_main(int argc, const char* const* argv) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // `commscope-bench osu_bw ...`: the test's name stands for the program, as OSU's binary.
  std::optional<OsuTest> test = osu_test_named(argv[0]);
  if (!test) {
    test = osu_test_named(argv[1]);
    ++argv;
    --argc;
  }
  const std::string name(to_string(*test));
  const OsuParse parsed = parse_osu_options(*test, argc, argv);
  if (parsed.exit_code >= 0) {
    if (rank == 0) std::fprintf(parsed.exit_code ? stderr : stdout, "%s\n", parsed.message.c_str());
    return parsed.exit_code;
  }
  try {
    return measure_all(parsed.options, MPI_COMM_WORLD);
  } catch (const InvalidArgument& e) {
    if (rank == 0) std::fprintf(stderr, "%s: %s\n", name.c_str(), e.what());
    return 2;
  }
}

}  // namespace commscope::bench
