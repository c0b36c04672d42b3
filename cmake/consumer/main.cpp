// Allreduce with every algorithm through the installed package; exits non-zero if wrong.
#include <commscope/collectives/collectives.hpp>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  commscope::MpiRuntime mpi(argc, argv);
  commscope::Communicator world;
  int bad = 0;
  for (const commscope::Algorithm* algo : commscope::algorithms()) {
    std::vector<double> x(1000, world.rank() + 1.0);
    world.allreduce(x.data(), x.data(), x.size(), commscope::DataType::f64, commscope::ReduceOp::sum, algo->name());
    const double want = world.size() * (world.size() + 1) / 2.0;
    for (double v : x) bad += v != want;
  }
  if (world.rank() == 0) std::printf("consumer: %d wrong\n", bad);
  return bad != 0;
}
