// Tensor or pipeline parallelism in double: the gradients of a model split over the ranks of this
// job (the heads and the MLP's hidden units, tensor_parallel.hpp; or, with --pp, the layers in
// stages, layout.hpp) against central differences of its own loss, and against the whole model's
// gradients.
//
//   mpirun -np 2 test_trainer_tp_gradcheck [--pp | --sp]
//
// --pp: the ranks are the stages of one pipeline (one micro-batch): stage s receives the previous
// stage's output and sends it on, backward sends the gradient of its input back, and the tied
// wte's gradient is the first stage's (encoder) plus the last stage's (head).
// --sp: tensor parallelism with sequence parallelism (model.hpp).
// The model is "tiny" with 200 tokens padded to 256 (as trainer.unit's check), its parameters GPT-2's
// initialisation plus N(0, 0.05), batch 2 x 8. Every rank holds the whole parameter vector and
// hands its shard to its split model, so a perturbed element reaches whichever rank holds it.
// Bounds: the split model's loss and gradients equal the whole model's within 1e-12 relative
// (the same arithmetic except the order of the TP sums); central differences (h = 1e-5) within
// 1e-5 (relative, floor 1e-5) on 7 elements of each of the 16 tensors, as trainer.unit's check.

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "commscope/collectives/communicator.hpp"
#include "commscope/collectives/types.hpp"
#include "commscope/trainer/layout.hpp"
#include "commscope/trainer/model.hpp"
#include "gradcheck_common.hpp"
#include "parallel/tensor_parallel.hpp"

namespace ct = commscope::trainer;

namespace {

using ct::gradcheck::kBatch;
using ct::gradcheck::kSeq;
using ct::gradcheck::random_tokens;
using ct::gradcheck::rel_error;
constexpr double kStep = 1e-5, kFloor = 1e-5, kBound = 1e-5, kExactBound = 1e-12;

}  // namespace

int main(int argc, char** argv) {
  commscope::MpiRuntime mpi(argc, argv);
  commscope::Communicator world;
  const bool pipeline = argc > 1 && std::string(argv[1]) == "--pp";
  const bool sequence = argc > 1 && std::string(argv[1]) == "--sp";
  const int rank = world.rank(), tp = pipeline ? 1 : world.size(), pp = pipeline ? world.size() : 1;
  const ct::ModelConfig config = ct::gradcheck::test_config();
  if (config.heads % tp != 0 || pp > config.layers) {
    if (rank == 0)
      std::fprintf(stderr, "the %d heads and %d layers do not split over %d ranks\n", config.heads, config.layers,
                   world.size());
    return 2;
  }
  const ct::Stage stage = ct::pipeline_stage(config, pp, pipeline ? rank : 0);
  const int tp_rank = pipeline ? 0 : rank;
  const ct::ParameterLayout layout(config);

  // The whole model: GPT-2's initialisation plus noise off the padded vocabulary rows.
  ct::Gpt2<double> whole(config, kBatch, kSeq);
  whole.init(7);
  {
    std::mt19937_64 rng(8);
    std::normal_distribution<double> normal(0.0, 0.05);
    const std::size_t padded_from = static_cast<std::size_t>(config.vocab * config.channels);
    const std::size_t padded_to = layout.size(ct::Tensor::wte);
    for (std::size_t i = 0; i < layout.total(); ++i) {
      const double noise = normal(rng);
      if (i < padded_from || i >= padded_to) whole.params()[i] += noise;
    }
  }
  std::vector<double> full(whole.params().begin(), whole.params().end());
  const std::vector<int> inputs = random_tokens(1, config.vocab), targets = random_tokens(2, config.vocab);
  whole.zero_grads();
  const double whole_loss = whole.forward(inputs.data(), targets.data());
  whole.backward();

  ct::Gpt2<double> split(config, kBatch, kSeq, tp, stage, 1, sequence);
  if (tp > 1) split.set_tensor_parallel(ct::parallel::tensor_parallel_ops<double>(world, "ring"));
  auto load = [&] {
    const std::vector<double> mine = ct::parallel::model_shard<double>(config, tp, tp_rank, stage, full);
    std::copy(mine.begin(), mine.end(), split.params().begin());
  };
  // The split model's loss on every rank (the pipeline's: through its stages, from the last).
  const std::size_t n = static_cast<std::size_t>(kBatch) * kSeq * static_cast<std::size_t>(config.channels);
  std::vector<double> message(n);
  auto split_loss = [&] {
    if (!pipeline) return split.forward(inputs.data(), targets.data());
    if (!stage.first())
      MPI_Recv(message.data(), static_cast<int>(n), MPI_DOUBLE, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    double l = split.forward(inputs.data(), targets.data(), message.data());
    if (!stage.last())
      MPI_Send(split.stage_output().data(), static_cast<int>(n), MPI_DOUBLE, rank + 1, 0, MPI_COMM_WORLD);
    MPI_Bcast(&l, 1, MPI_DOUBLE, pp - 1, MPI_COMM_WORLD);
    return l;
  };
  load();
  split.zero_grads();
  const double loss = split_loss();
  if (!pipeline) {
    split.backward();
  } else {
    if (!stage.last())
      MPI_Recv(message.data(), static_cast<int>(n), MPI_DOUBLE, rank + 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    split.backward(1.0, message.data());
    if (!stage.first())
      MPI_Send(split.stage_input_grad().data(), static_cast<int>(n), MPI_DOUBLE, rank - 1, 1, MPI_COMM_WORLD);
    // The tied wte: the encoder's gradient (first stage) plus the head's (last stage).
    const ct::Segment s0 = split.layout().segment(0);
    std::vector<double> sum(s0.count);
    MPI_Comm ends = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, stage.first() || stage.last() ? 0 : MPI_UNDEFINED, rank, &ends);
    if (ends != MPI_COMM_NULL) {
      MPI_Allreduce(split.grads().data() + s0.offset, sum.data(), static_cast<int>(s0.count), MPI_DOUBLE, MPI_SUM,
                    ends);
      std::copy(sum.begin(), sum.end(), split.grads().begin() + static_cast<std::ptrdiff_t>(s0.offset));
      MPI_Comm_free(&ends);
    }
  }
  // Every rank's gradient shard -> the whole layout.
  const std::vector<double> grads =
      ct::parallel::gather_model<double>(world, config, tp, tp_rank, stage, split.grads());

  int failures = 0;
  const double loss_err = std::abs(loss - whole_loss) / std::abs(whole_loss);
  if (rank == 0)
    std::printf("tp %d%s, pp %d: loss %.12f, whole model %.12f, relative difference %.1e (bound %.0e)\n", tp,
                sequence ? " (sequence parallel)" : "", pp, loss, whole_loss, loss_err, kExactBound);
  failures += loss_err <= kExactBound ? 0 : 1;

  std::mt19937_64 rng(3);
  double overall = 0, overall_whole = 0;
  constexpr int kSamples = 7;
  for (int ti = 0; ti < ct::kTensorCount; ++ti) {
    const auto t = static_cast<ct::Tensor>(ti);
    // Against the whole model: every element of the tensor, all layers.
    double diff2 = 0, norm2 = 0;
    const int layers = ct::is_per_layer(t) ? config.layers : 1;
    for (int l = 0; l < layers; ++l)
      for (std::size_t i = 0; i < layout.size(t); ++i) {
        const std::size_t o = layout.offset(t, l) + i;
        diff2 += std::pow(grads[o] - whole.grads()[o], 2);
        norm2 += std::pow(whole.grads()[o], 2);
      }
    const double vs_whole = std::sqrt(diff2 / std::max(norm2, 1e-300));
    // Central differences of the split model's loss (every rank evaluates it: a collective).
    std::size_t active = layout.size(t);
    if (t == ct::Tensor::wte) active = static_cast<std::size_t>(config.vocab * config.channels);
    if (t == ct::Tensor::wpe) active = static_cast<std::size_t>(kSeq * config.channels);
    double worst = 0;
    for (int j = 0; j < kSamples; ++j) {
      const int l = ct::is_per_layer(t) ? j % config.layers : 0;
      const std::size_t spread = active * static_cast<std::size_t>(j) / kSamples;
      const std::size_t o =
          layout.offset(t, l) + (spread + rng() % std::max<std::size_t>(1, active / kSamples)) % active;
      const double saved = full[o];
      full[o] = saved + kStep;
      load();
      const double plus = split_loss();
      full[o] = saved - kStep;
      load();
      const double minus = split_loss();
      full[o] = saved;
      worst = std::max(worst, rel_error(grads[o], (plus - minus) / (2 * kStep), kFloor));
    }
    load();
    const bool ok = worst <= kBound && vs_whole <= kExactBound;
    if (rank == 0)
      std::printf("  %-9s %s: central differences max rel error %.2e, vs the whole model rel L2 %.1e %s\n",
                  std::string(ct::tensor_name(t)).c_str(),
                  pipeline               ? "staged    "
                  : ct::is_tp_sharded(t) ? "split     "
                                         : "replicated",
                  worst, vs_whole, ok ? "ok" : "FAIL");
    failures += ok ? 0 : 1;
    overall = std::max(overall, worst);
    overall_whole = std::max(overall_whole, vs_whole);
  }
  MPI_Bcast(&failures, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("%s: max rel error %.2e (bound %.0e), vs the whole model %.1e (bound %.0e), %d failure(s)\n",
                failures == 0 ? "PASS" : "FAIL", overall, kBound, overall_whole, kExactBound, failures);
  return failures == 0 ? 0 : 1;
}
