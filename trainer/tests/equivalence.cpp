// Data parallelism changes where the work happens, not the result: with the same seed and global
// batch, N ranks end with the parameters one rank gets, for every mode and algorithm.
//
//   mpirun -np N test_trainer_equivalence DATA.txt [--steps 5]
//
// Rank 0 trains the reference alone (a communicator of itself, the whole global batch), then all
// ranks train each (mode, algorithm) together; the gathered parameters must agree with the
// reference within 1e-5 relative (L2 norm of the difference over the norm of the reference; the
// largest element difference is printed too). Summation order differs between rank counts, so
// equality is not bitwise.

#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "commscope/collectives/communicator.hpp"
#include "commscope/trainer/data.hpp"
#include "commscope/trainer/data_parallel.hpp"
#include "commscope/trainer/model.hpp"

namespace ct = commscope::trainer;

namespace {

constexpr int kGlobalBatch = 12;  // a multiple of 1, 2, 3 and 4 ranks
constexpr std::uint64_t kSeed = 42;

std::vector<float> train(commscope::Communicator& comm, const ct::TokenDataset& data, ct::DpOptions dp, int steps,
                         std::vector<float>* losses) {
  const ct::ModelConfig config = ct::preset("tiny");
  const int seq = config.max_seq;
  ct::BatchLoader loader(data, kGlobalBatch, seq, comm.rank(), comm.size(), kSeed);
  ct::Gpt2<float> model(config, loader.local_batch(), seq);
  model.init(kSeed);
  std::vector<float> init(model.params().begin(), model.params().end());
  ct::AdamWOptions adamw;
  adamw.lr = 1e-3f;
  adamw.warmup_steps = 2;
  adamw.total_steps = steps;
  ct::DataParallel parallel(comm, model, dp, adamw);
  parallel.load(init);
  std::vector<int> in(static_cast<std::size_t>(loader.local_batch()) * seq), tg(in.size());
  for (int s = 0; s < steps; ++s) {
    loader.next(in.data(), tg.data());
    const auto r = parallel.train_step(in.data(), tg.data());
    if (losses) losses->push_back(r.loss);
  }
  return parallel.full_params();
}

}  // namespace

int main(int argc, char** argv) {
  commscope::MpiRuntime mpi(argc, argv);
  commscope::Communicator world;
  const int rank = world.rank(), size = world.size();
  if (argc < 2) {
    if (rank == 0) std::fprintf(stderr, "usage: test_trainer_equivalence DATA.txt [--steps N]\n");
    return 2;
  }
  int steps = 5;
  if (argc >= 4 && std::strcmp(argv[2], "--steps") == 0) steps = std::atoi(argv[3]);
  const ct::TokenDataset data = ct::TokenDataset::load(argv[1]);

  std::vector<float> reference, ref_losses;
  if (rank == 0) {
    commscope::Communicator self(MPI_COMM_SELF);
    reference = train(self, data, {}, steps, &ref_losses);
    std::printf("reference (1 rank, batch %d): losses", kGlobalBatch);
    for (float l : ref_losses) std::printf(" %.5f", static_cast<double>(l));
    std::printf("\n");
  }
  int failures = 0;
  for (const char* mode : {"ddp", "zero1", "zero2", "zero3"}) {
    for (const char* algo : {"mpi", "ring", "tree", "rhd", "shm", "hier"}) {
      ct::DpOptions dp;
      dp.mode = ct::parse_dp_mode(mode);
      dp.algo = algo;
      dp.bucket_bytes = 64 << 10;  // several buckets even for the tiny model
      std::vector<float> losses;
      const std::vector<float> got = train(world, data, dp, steps, &losses);
      if (rank != 0) continue;
      double diff = 0, norm = 0, worst = 0;
      for (std::size_t i = 0; i < got.size(); ++i) {
        const double d = static_cast<double>(got[i]) - reference[i];
        diff += d * d;
        norm += static_cast<double>(reference[i]) * reference[i];
        worst = std::max(worst, std::fabs(d));
      }
      const double rel = std::sqrt(diff / norm);
      const double loss_diff = std::fabs(static_cast<double>(losses.back()) - ref_losses.back());
      const bool ok = got.size() == reference.size() && rel <= 1e-5;
      std::printf(
          "%d ranks %-5s %-4s: relative difference %.2e, largest element difference %.2e, last loss %.5f "
          "(reference %+.1e) %s\n",
          size, mode, algo, rel, worst, static_cast<double>(losses.back()), loss_diff, ok ? "ok" : "FAIL");
      failures += ok ? 0 : 1;
    }
  }
  MPI_Bcast(&failures, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0) std::printf("%s: %d failure(s)\n", failures == 0 ? "PASS" : "FAIL", failures);
  return failures == 0 ? 0 : 1;
}
