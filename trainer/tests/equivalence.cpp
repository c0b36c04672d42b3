// Data parallelism changes where the work happens, not the result: with the same seed and global
// batch, N ranks end with the parameters one rank gets, for every mode and algorithm.
//
//   mpirun -np N test_trainer_equivalence DATA.txt [--steps 5] [--tp T] [--pp P] [--micro-batches M]
//                                        [--gpipe 1] [--model tiny] [--algos mpi,ring,...]
//
// Rank 0 trains the reference alone (a communicator of itself, the whole global batch), then all
// ranks train each (mode, algorithm) together; the gathered parameters must agree with the
// reference within 1e-5 relative (L2 norm of the difference over the norm of the reference; the
// largest element difference is printed too), and every step's loss and gradient norm (before
// clipping) with the reference's within 1e-5 relative: AdamW and norm clipping cancel a constant
// factor of the gradients, so the parameters alone would not see a rank count's scale wrong (a
// missing 1/P, a summed instead of averaged loss); the loss and the norm do. Summation order
// differs between rank counts, so equality is not bitwise.
//
// --tp T: the N ranks form a DP x TP grid of N/T x T (tensor parallelism, TP innermost); every
// data-parallel mode runs over the DP group, every algorithm carries both groups' collectives.
//
// --pp P: pipeline parallelism over P stages (PP x DP x TP, PP outermost), each rank's batch run
// as --micro-batches M (1F1B, or GPipe with --gpipe 1).
//
// --sp 1: sequence parallelism over the TP group (model.hpp).

#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "commscope/collectives/communicator.hpp"
#include "commscope/trainer/cpu_engine.hpp"
#include "commscope/trainer/data.hpp"
#include "commscope/trainer/model.hpp"
#include "parallel/pipeline.hpp"
#include "parallel/process_grid.hpp"
#include "parallel/tensor_parallel.hpp"

namespace ct = commscope::trainer;

namespace {

constexpr int kGlobalBatch = 12;  // a multiple of 1, 2, 3 and 4 ranks
constexpr std::uint64_t kSeed = 42;

// comm: the data-parallel group; grid: tensor parallelism (null: none). Returns the whole model.
std::string g_model = "tiny";
int g_micro_batches = 1;
bool g_gpipe = false;
bool g_sp = false;

std::vector<float> train(commscope::Communicator& comm, const ct::TokenDataset& data, ct::ParallelPlan plan, int steps,
                         std::vector<ct::TrainEngine::StepResult>* steps_out,
                         ct::parallel::ProcessGrid* grid = nullptr) {
  const ct::ModelConfig config = ct::preset(g_model);
  const int seq = config.max_seq;
  const int tp = grid ? grid->tp_size : 1, pp = grid ? grid->pp_size : 1;
  const int m = grid ? g_micro_batches : 1;  // the reference runs one batch
  const ct::Stage stage = ct::pipeline_stage(config, pp, grid ? grid->pp_rank : 0);
  ct::BatchLoader loader(data, kGlobalBatch, seq, comm.rank(), comm.size(), kSeed);
  ct::Gpt2<float> initializer(config, 1, 1);
  initializer.init(kSeed);
  std::vector<float> init(initializer.params().begin(), initializer.params().end());
  if (grid) init = ct::parallel::model_shard<float>(config, tp, grid->tp_rank, stage, init);
  ct::Gpt2<float> model(config, loader.local_batch() / m, seq, tp, stage,
                        ct::parallel::pipeline_slots(stage.index, stage.count, m, g_gpipe), g_sp && tp > 1);
  plan.tp = tp, plan.sp = g_sp && tp > 1, plan.pp = pp;
  plan.micro_batches = m;
  plan.gpipe = g_gpipe;
  ct::AdamWOptions adamw;
  adamw.lr = 1e-3f;
  adamw.warmup_steps = 2;
  adamw.total_steps = steps;
  ct::CpuEngine parallel(comm, model, plan, adamw, grid ? grid->groups() : ct::ParallelGroups{});
  parallel.load(init);
  std::vector<int> in(static_cast<std::size_t>(loader.local_batch()) * seq), tg(in.size());
  for (int s = 0; s < steps; ++s) {
    loader.next(in.data(), tg.data());
    const auto r = parallel.train_step(in.data(), tg.data());
    if (steps_out) steps_out->push_back(r);
  }
  return grid ? ct::parallel::gather_model<float>(grid->mp, config, tp, grid->tp_rank, stage, parallel.full_params())
              : parallel.full_params();
}

}  // namespace

int main(int argc, char** argv) {
  commscope::MpiRuntime mpi(argc, argv);
  commscope::Communicator world;
  const int rank = world.rank(), size = world.size();
  if (argc < 2) {
    if (rank == 0)
      std::fprintf(stderr,
                   "usage: test_trainer_equivalence DATA.txt [--steps N] [--tp T] [--model NAME] [--algos A,B]\n");
    return 2;
  }
  int steps = 5, tp = 1, pp = 1;
  std::vector<std::string> algos = {"mpi", "ring", "tree", "rhd", "shm", "hier"};
  for (int i = 2; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--steps") == 0) steps = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--tp") == 0) tp = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--pp") == 0) pp = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--micro-batches") == 0) g_micro_batches = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--gpipe") == 0) g_gpipe = std::atoi(argv[i + 1]) != 0;
    if (std::strcmp(argv[i], "--sp") == 0) g_sp = std::atoi(argv[i + 1]) != 0;
    if (std::strcmp(argv[i], "--model") == 0) g_model = argv[i + 1];
    if (std::strcmp(argv[i], "--algos") == 0) {
      algos.clear();
      std::string list = argv[i + 1];
      for (std::size_t at = 0; at <= list.size();) {
        const std::size_t comma = std::min(list.find(',', at), list.size());
        algos.push_back(list.substr(at, comma - at));
        at = comma + 1;
      }
    }
  }
  if (tp < 1 || pp < 1 || size % (tp * pp) != 0 || g_micro_batches < 1 ||
      kGlobalBatch / (size / (tp * pp)) % g_micro_batches != 0) {
    if (rank == 0)
      std::fprintf(stderr, "--tp %d x --pp %d does not divide the %d ranks, or --micro-batches %d the batch\n", tp, pp,
                   size, g_micro_batches);
    return 2;
  }
  const bool model_parallel = tp > 1 || pp > 1 || g_micro_batches > 1;
  std::unique_ptr<ct::parallel::ProcessGrid> grid;
  if (model_parallel) grid = std::make_unique<ct::parallel::ProcessGrid>(world, tp, pp);
  commscope::Communicator& dp_comm = grid ? grid->dp : world;
  const ct::TokenDataset data = ct::TokenDataset::load(argv[1]);

  std::vector<float> reference;
  std::vector<ct::TrainEngine::StepResult> ref_steps;
  if (rank == 0) {
    commscope::Communicator self(MPI_COMM_SELF);
    reference = train(self, data, {}, steps, &ref_steps);
    std::printf("reference (1 rank, batch %d): losses", kGlobalBatch);
    for (const auto& r : ref_steps) std::printf(" %.7f", static_cast<double>(r.loss));
    std::printf(", gradient norms");
    for (const auto& r : ref_steps) std::printf(" %.6f", static_cast<double>(r.grad_norm));
    std::printf("\n");
  }
  int failures = 0;
  for (const char* mode : {"ddp", "zero1", "zero2", "zero3"}) {
    for (const std::string& algo : algos) {
      ct::ParallelPlan plan;
      plan.dp_mode = ct::parse_dp_mode(mode);
      plan.algo = algo;
      plan.bucket_bytes = 64 << 10;  // several buckets even for the tiny model
      std::vector<ct::TrainEngine::StepResult> got_steps;
      const std::vector<float> got = train(dp_comm, data, plan, steps, &got_steps, grid.get());
      if (rank != 0) continue;
      double diff = 0, norm = 0, worst = 0;
      for (std::size_t i = 0; i < got.size(); ++i) {
        const double d = static_cast<double>(got[i]) - reference[i];
        diff += d * d;
        norm += static_cast<double>(reference[i]) * reference[i];
        worst = std::max(worst, std::fabs(d));
      }
      const double rel = std::sqrt(diff / norm);
      const double loss_diff = std::fabs(static_cast<double>(got_steps.back().loss) - ref_steps.back().loss);
      double loss_rel = 0, norm_rel = 0;  // the largest relative differences of a step's loss and norm
      for (std::size_t i = 0; i < got_steps.size() && i < ref_steps.size(); ++i) {
        const auto& a = got_steps[i];
        const auto& b = ref_steps[i];
        loss_rel = std::max(loss_rel, std::fabs(static_cast<double>(a.loss) - b.loss) / b.loss);
        norm_rel = std::max(norm_rel, std::fabs(static_cast<double>(a.grad_norm) - b.grad_norm) / b.grad_norm);
      }
      const bool ok = got.size() == reference.size() && got_steps.size() == ref_steps.size() && rel <= 1e-5 &&
                      loss_rel <= 1e-5 && norm_rel <= 1e-5;
      std::printf(
          "%d ranks (dp %d x tp %d%s x pp %d, %d micro-batch%s%s) %-5s %-4s: relative difference %.2e, largest element "
          "difference %.2e, last loss %.7f (reference %+.1e), largest loss and gradient-norm relative differences "
          "%.1e, %.1e %s\n",
          size, size / (tp * pp), tp, g_sp && tp > 1 ? " sp" : "", pp, g_micro_batches, g_micro_batches > 1 ? "es" : "",
          pp > 1 ? (g_gpipe ? ", gpipe" : ", 1f1b") : "", mode, algo.c_str(), rel, worst,
          static_cast<double>(got_steps.back().loss), loss_diff, loss_rel, norm_rel, ok ? "ok" : "FAIL");
      if (model_parallel) {
        std::printf("    losses");
        for (const auto& r : got_steps) std::printf(" %.7f", static_cast<double>(r.loss));
        std::printf("\n");
      }
      failures += ok ? 0 : 1;
    }
  }
  MPI_Bcast(&failures, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0) std::printf("%s: %d failure(s)\n", failures == 0 ? "PASS" : "FAIL", failures);
  return failures == 0 ? 0 : 1;
}
