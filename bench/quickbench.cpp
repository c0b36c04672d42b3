// commscope-quickbench: one collective at one size, every algorithm side by side, plus the
// machine's memcpy bandwidth for scale. A first look at a machine before the full
// commscope-bench sweep; checks correctness before it times anything.
//
//   mpirun -np 2 build/bin/commscope-quickbench -s 64M -d f32
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "commscope/bench/options.hpp"
#include "commscope/collectives/check_data.hpp"
#include "commscope/collectives/collectives.hpp"
#include "commscope/common/timing.hpp"

using namespace commscope;
using commscope::bench::parse_size;

namespace {

struct Options {
  std::string size = "64M";
  std::string type = "f32";
  std::string op = "sum";
  std::string coll = "allreduce";
  std::vector<std::string> algos = {"mpi", "ring", "rhd", "tree"};
  int iters = 20;
  int warmup = 5;
  std::size_t segment = std::size_t{1} << 20;
};

// "f32 f64 ...": the names of a table of the library's values, as the library spells them.
template <class Table>
std::string names_of(const Table& values) {
  std::string s;
  for (const auto v : values) s += (s.empty() ? "" : " ") + std::string(to_string(v));
  return s;
}

double max_over_ranks(double v, MPI_Comm comm) {
  double m = 0;
  MPI_Allreduce(&v, &m, 1, MPI_DOUBLE, MPI_MAX, comm);
  return m;
}

int run(int argc, char** argv) {
  Options o;
  CLI::App app{"commscope-quickbench: time one collective with every algorithm and compare with memcpy",
               "commscope-quickbench"};
  app.add_option("-s,--size", o.size, "array size in bytes (K, M, G suffixes; nccl-tests' size)")
      ->capture_default_str();
  // The lists come from the library's own tables, so a new type or collective is listed with it.
  app.add_option("-d,--type", o.type, "datatype: " + names_of(kAllDataTypes))->capture_default_str();
  app.add_option("-o,--op", o.op, "reduction: " + names_of(kAllReduceOps))->capture_default_str();
  app.add_option("-c,--collective", o.coll, names_of(kAllCollectives))->capture_default_str();
  app.add_option("--algo", o.algos, "algorithms to time")->delimiter(',')->capture_default_str();
  app.add_option("-n,--iters", o.iters, "timed iterations")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("-w,--warmup", o.warmup, "warm-up iterations")->check(CLI::NonNegativeNumber)->capture_default_str();
  app.add_option("--segment", o.segment, "ring pipeline segment (bytes)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  CommOptions copts;
  copts.algo.segment_bytes = o.segment;
  Communicator comm(MPI_COMM_WORLD, copts);
  const int p = comm.size(), r = comm.rank();
  const DataType type = parse_datatype(o.type);
  const ReduceOp op = parse_reduce_op(o.op);
  const Collective coll = parse_collective(o.coll);
  const std::size_t es = type_size(type);
  const std::size_t bytes = parse_size(o.size);
  // Per-call count such that the array (nccl-tests' size) is `bytes`.
  const std::size_t per_rank_blocks = collective_bytes(coll, 1, type, p) / es;
  const std::size_t count = bytes / es / per_rank_blocks;
  const check::Spec spec{coll, type, op, count, 0, p, 42};
  const std::size_t sbytes = check::send_elements(spec) * es, rbytes = check::recv_elements(spec) * es;
  std::vector<std::byte> send(std::max<std::size_t>(sbytes, 1)), recv(std::max<std::size_t>(rbytes, 1));
  check::fill_send(spec, r, send.data());
  const double actual = static_cast<double>(collective_bytes(coll, count, type, p));
  const check::AlltoallvLayout layout = check::peer_layout(spec, r);  // alltoallv's counts

  if (r == 0) {
    std::printf("# commscope-quickbench: %s %s %s, %d ranks, %.0f bytes, %d iterations (+%d warm-up)\n", o.coll.c_str(),
                o.type.c_str(), o.op.c_str(), p, actual, o.iters, o.warmup);
    std::printf("# %-6s %12s %12s %12s %8s\n", "algo", "time(us)", "algbw(GB/s)", "busbw(GB/s)", "#wrong");
  }
  int status = 0;
  for (const std::string& name : o.algos) {
    const Algorithm& algo = find_algorithm(name);
    if (!algo.supports(coll)) {
      if (r == 0) std::printf("  %-6s %12s\n", name.c_str(), "n/a");
      continue;
    }
    CollArgs args{coll, send.data(), recv.data(), count, type, op, 0};
    layout.apply(args);
    // Correctness first: one checked call.
    comm.run(args, algo);
    unsigned long long wrong = check::check_recv(spec, r, recv.data()).wrong, total_wrong = 0;
    MPI_Allreduce(&wrong, &total_wrong, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm.mpi_comm());
    for (int i = 0; i < o.warmup; ++i) comm.run(args, algo);
    comm.barrier();
    const double loop = timing::seconds_of([&] {
      for (int i = 0; i < o.iters; ++i) comm.run(args, algo);
    });
    const double t = max_over_ranks(loop / o.iters, comm.mpi_comm());
    const double algbw = actual / t / 1e9;
    if (r == 0) {
      std::printf("  %-6s %12.1f %12.3f %12.3f %8llu\n", name.c_str(), t * 1e6, algbw, algbw * busbw_factor(coll, p),
                  total_wrong);
    }
    if (total_wrong) status = 1;
  }

  // memcpy of the same array, for scale: every rank at once (what the algorithms contend
  // with), then rank 0 alone.
  std::vector<std::byte> a(std::max<std::size_t>(bytes, 1), std::byte{1}), b(std::max<std::size_t>(bytes, 1));
  auto time_memcpy = [&] {
    std::memcpy(b.data(), a.data(), bytes);
    return timing::seconds_of([&] {
             for (int i = 0; i < o.iters; ++i)
               std::memcpy(i % 2 ? a.data() : b.data(), i % 2 ? b.data() : a.data(), bytes);
           }) /
           o.iters;
  };
  comm.barrier();
  const double all = max_over_ranks(time_memcpy(), comm.mpi_comm());
  comm.barrier();
  const double alone = r == 0 ? time_memcpy() : 0;
  comm.barrier();
  if (r == 0) {
    std::printf("  %-6s %12.1f %12.3f %12s %8s   (all %d ranks copying at once; GB/s per rank)\n", "memcpy", all * 1e6,
                static_cast<double>(bytes) / all / 1e9, "-", "-", p);
    std::printf("  %-6s %12.1f %12.3f %12s %8s   (rank 0 alone)\n", "memcpy", alone * 1e6,
                static_cast<double>(bytes) / alone / 1e9, "-", "-");
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  MpiRuntime mpi(argc, argv);
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::fprintf(stderr, "commscope-quickbench: rank %d: %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 2);
    return 2;
  }
}
