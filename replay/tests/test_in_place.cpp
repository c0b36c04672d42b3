// The buffers a replayed collective runs on (backend.hpp): allreduce in place, as commscope-train
// and PyTorch's all_reduce call it (out of place Open MPI copies the array first: the ddp replays
// read 1.35-1.38x the recorded communication), allgather and reducescatter out of place, as the
// trainer's ZeRO calls them. One rank (MPI as a singleton); an algorithm that records the buffers
// it was given.
#include <mpi.h>

#include <gtest/gtest.h>

#include "backend.hpp"

using namespace commscope;

namespace {

struct Seen final : Algorithm {
  mutable const void* send = nullptr;
  mutable void* recv = nullptr;
  std::string_view name() const override { return "seen"; }
  std::string_view description() const override { return "records its buffers"; }
  bool supports(Collective) const override { return true; }
  void run(Transport&, const CollArgs& a, const AlgoOptions&) const override { send = a.send, recv = a.recv; }
  std::optional<Cost> cost(Collective, int, double, const AlgoOptions&) const override { return std::nullopt; }
};

}  // namespace

TEST(ReplayBuffers, AllreduceInPlaceTheOthersNot) {
  Communicator comm(MPI_COMM_WORLD);
  const auto backend = replay::make_host_backend();
  Seen seen;
  for (const Collective c : {Collective::allreduce, Collective::allgather, Collective::reducescatter}) {
    backend->run("dp", comm, {c, nullptr, nullptr, 256, DataType::f32, ReduceOp::sum, 0}, 1024, &seen);
    ASSERT_NE(seen.recv, nullptr) << to_string(c);
    EXPECT_EQ(seen.send == seen.recv, c == Collective::allreduce) << to_string(c);
  }
}

int main(int argc, char** argv) {
  MpiRuntime mpi(argc, argv);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
