// Allreduce with every algorithm through the installed package, profiled; exits non-zero if a
// result is wrong or the profile misses an iteration.
#include <commscope/collectives/collectives.hpp>
#include <commscope/profiler/session.hpp>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  commscope::MpiRuntime mpi(argc, argv);
  commscope::Communicator world;
  int bad = 0;
  int step = 0;
  commscope::profiler::SessionOptions options;
  options.backend = commscope::profiler::BackendChoice::kHost;
  commscope::profiler::Session session(MPI_COMM_WORLD, options);
  for (const commscope::Algorithm* algo : commscope::algorithms()) {
    COMMSCOPE_PROFILE_ITERATION(step++);
    std::vector<double> x(1000, world.rank() + 1.0);
    {
      COMMSCOPE_PROFILE_COMM("allreduce", algo->name(), static_cast<std::int64_t>(x.size() * sizeof(double)));
      world.allreduce(x.data(), x.data(), x.size(), commscope::DataType::f64, commscope::ReduceOp::sum, algo->name());
    }
    const double want = world.size() * (world.size() + 1) / 2.0;
    for (double v : x) bad += v != want;
  }
  const commscope::profiler::Profile profile = session.finish();
  if (world.rank() == 0) {
    bad += profile.breakdown.size() != static_cast<std::size_t>(step * world.size());
    std::printf("consumer: %d wrong, %zu profiled iterations\n", bad, profile.breakdown.size());
  }
  return bad != 0;
}
