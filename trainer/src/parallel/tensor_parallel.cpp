#include "parallel/tensor_parallel.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "commscope/collectives/types.hpp"
#include "commscope/profiler/recorder.hpp"
#include "commscope/trainer/collective_activity.hpp"
#include "commscope/trainer/layout.hpp"
#include "parallel/profiled_group.hpp"

namespace commscope::trainer::parallel {

namespace {

// Calls f(tensor, whole_offset, shard_offset, count) for every contiguous piece of TP rank r's
// shard `part` (of some pipeline stage's layers: its layer l is the whole model's first_layer + l).
template <class F>
void for_each_piece(const ParameterLayout& whole, const ParameterLayout& part, int r, F&& f) {
  const std::size_t C = static_cast<std::size_t>(whole.config().channels);
  const std::size_t Cl = C / static_cast<std::size_t>(part.tp()), rank = static_cast<std::size_t>(r);
  for (int ti = 0; ti < kTensorCount; ++ti) {
    const auto t = static_cast<Tensor>(ti);
    if (part.size(t) == 0) continue;  // not held by this stage
    const int layers = is_per_layer(t) ? part.layers() : 1;
    for (int l = 0; l < layers; ++l) {
      const std::size_t w = whole.offset(t, part.stage().first_layer + l), p = part.offset(t, l);
      switch (t) {
        case Tensor::qkvw:  // q, k and v rows of this rank's heads: [3][Cl rows of C]
          for (std::size_t k = 0; k < 3; ++k) f(t, w + (k * C + rank * Cl) * C, p + k * Cl * C, Cl * C);
          break;
        case Tensor::qkvb:
          for (std::size_t k = 0; k < 3; ++k) f(t, w + k * C + rank * Cl, p + k * Cl, Cl);
          break;
        case Tensor::fcw:  // rows of this rank's hidden units
          f(t, w + rank * 4 * Cl * C, p, 4 * Cl * C);
          break;
        case Tensor::fcb:
          f(t, w + rank * 4 * Cl, p, 4 * Cl);
          break;
        case Tensor::attprojw:  // [C, C] -> the columns of this rank's heads, [C, Cl]
          for (std::size_t o = 0; o < C; ++o) f(t, w + o * C + rank * Cl, p + o * Cl, Cl);
          break;
        case Tensor::fcprojw:  // [C, 4C] -> [C, 4Cl]
          for (std::size_t o = 0; o < C; ++o) f(t, w + o * 4 * C + rank * 4 * Cl, p + o * 4 * Cl, 4 * Cl);
          break;
        case Tensor::wte:  // this rank's vocabulary rows [Vp/tp, C]
          f(t, w + rank * part.size(t), p, part.size(t));
          break;
        default:
          f(t, w, p, whole.size(t));
      }
    }
  }
}

void check_rank(int tp, int rank) {
  if (tp < 1 || rank < 0 || rank >= tp)
    throw std::invalid_argument("tensor parallelism: rank " + std::to_string(rank) + " of " + std::to_string(tp));
}

}  // namespace

template <class T>
std::vector<T> tp_shard(const ModelConfig& config, int tp, int rank, std::span<const T> full) {
  return model_shard(config, tp, rank, Stage{}, full);
}

template <class T>
std::vector<T> model_shard(const ModelConfig& config, int tp, int rank, const Stage& stage, std::span<const T> full) {
  check_rank(tp, rank);
  const ParameterLayout whole(config), part(config, tp, stage);
  if (full.size() != whole.total())
    throw std::invalid_argument("tp_shard: the buffer holds " + std::to_string(full.size()) + " elements, not " +
                                std::to_string(whole.total()));
  std::vector<T> mine(part.total());
  for_each_piece(whole, part, rank, [&](Tensor, std::size_t w, std::size_t p, std::size_t n) {
    std::copy_n(full.data() + w, n, mine.data() + p);
  });
  return mine;
}

template <class T>
std::vector<T> tp_unshard(const ModelConfig& config, int tp, std::span<const T> shards) {
  check_rank(tp, 0);
  const ParameterLayout whole(config), part(config, tp);
  if (shards.size() != part.total() * static_cast<std::size_t>(tp))
    throw std::invalid_argument("tp_unshard: the buffer holds " + std::to_string(shards.size()) + " elements, not " +
                                std::to_string(part.total() * static_cast<std::size_t>(tp)));
  std::vector<T> full(whole.total());
  for (int r = 0; r < tp; ++r) {
    const T* mine = shards.data() + static_cast<std::size_t>(r) * part.total();
    for_each_piece(whole, part, r, [&](Tensor, std::size_t w, std::size_t p, std::size_t n) {
      std::copy_n(mine + p, n, full.data() + w);
    });
  }
  return full;
}

template std::vector<float> tp_shard<float>(const ModelConfig&, int, int, std::span<const float>);
template std::vector<double> tp_shard<double>(const ModelConfig&, int, int, std::span<const double>);
template std::vector<float> model_shard<float>(const ModelConfig&, int, int, const Stage&, std::span<const float>);
template std::vector<double> model_shard<double>(const ModelConfig&, int, int, const Stage&, std::span<const double>);
template std::vector<float> tp_unshard<float>(const ModelConfig&, int, std::span<const float>);
template std::vector<double> tp_unshard<double>(const ModelConfig&, int, std::span<const double>);

template <class T>
typename Gpt2<T>::TensorParallel tensor_parallel_ops(Communicator& tp, const std::string& algo) {
  constexpr DataType type = std::is_same_v<T, double> ? DataType::f64 : DataType::f32;
  auto group = std::make_shared<const ProfiledGroup>(tp, "tp", algo);
  auto op = [&tp, group](GroupOp name, ReduceOp reduce) {
    return [&tp, group, name, reduce](T* data, std::size_t count) {
      group->run(name, count * sizeof(T), [&] { tp.allreduce(data, data, count, type, reduce, group->algo()); });
    };
  };
  typename Gpt2<T>::TensorParallel ops;
  ops.rank = tp.rank();
  ops.sum = op(GroupOp::tp_allreduce, ReduceOp::sum);
  ops.max = op(GroupOp::tp_allreduce_max, ReduceOp::max);
  // Sequence parallelism's: count is this rank's share; the bytes are the whole array's.
  ops.reduce_scatter = [&tp, group](const T* full, T* mine, std::size_t count) {
    group->run(GroupOp::tp_reducescatter, count * sizeof(T) * static_cast<std::size_t>(tp.size()),
               [&] { tp.reducescatter(full, mine, count, type, ReduceOp::sum, group->algo()); });
  };
  ops.allgather = [&tp, group](const T* mine, T* full, std::size_t count) {
    group->run(GroupOp::tp_allgather, count * sizeof(T) * static_cast<std::size_t>(tp.size()),
               [&] { tp.allgather(mine, full, count, type, group->algo()); });
  };
  return ops;
}

template Gpt2<float>::TensorParallel tensor_parallel_ops<float>(Communicator&, const std::string&);
template Gpt2<double>::TensorParallel tensor_parallel_ops<double>(Communicator&, const std::string&);

std::vector<NormPiece> norm_pieces(const ParameterLayout& layout, std::size_t begin, std::size_t count) {
  std::vector<NormPiece> out;
  const std::size_t end = begin + count;
  for (int ti = 0; ti < kTensorCount; ++ti) {
    const auto t = static_cast<Tensor>(ti);
    if ((t == Tensor::wte || t == Tensor::wpe) && !layout.stage().first()) continue;  // the first stage's
    const int layers = is_per_layer(t) ? layout.layers() : 1;
    for (int l = 0; l < layers; ++l) {
      const std::size_t lo = std::max(begin, layout.offset(t, l)),
                        hi = std::min(end, layout.offset(t, l) + layout.size(t));
      if (lo < hi) out.push_back({lo - begin, hi - lo, is_tp_sharded(t)});
    }
  }
  return out;
}

template <class T>
std::vector<T> gather_model(Communicator& mp, const ModelConfig& config, int tp, int tp_rank, const Stage& stage,
                            std::span<const T> mine) {
  const ParameterLayout whole(config), part(config, tp, stage);
  if (mine.size() != part.total())
    throw std::invalid_argument("gather_model: the shard holds " + std::to_string(mine.size()) + " elements, not " +
                                std::to_string(part.total()));
  std::vector<T> full(whole.total(), T(0));
  // One writer per element, so that the sum over the group is the whole model exactly: the
  // replicated tensors from TP rank 0, segment 0 from the first stage.
  for_each_piece(whole, part, tp_rank, [&](Tensor t, std::size_t w, std::size_t p, std::size_t n) {
    if ((tp_rank != 0 && !is_tp_sharded(t)) || ((t == Tensor::wte || t == Tensor::wpe) && !stage.first())) return;
    std::copy_n(mine.data() + p, n, full.data() + w);
  });
  if (mp.size() > 1)
    mp.allreduce(full.data(), full.data(), full.size(), std::is_same_v<T, double> ? DataType::f64 : DataType::f32,
                 ReduceOp::sum, "mpi");
  return full;
}

template std::vector<float> gather_model<float>(Communicator&, const ModelConfig&, int, int, const Stage&,
                                                std::span<const float>);
template std::vector<double> gather_model<double>(Communicator&, const ModelConfig&, int, int, const Stage&,
                                                  std::span<const double>);

}  // namespace commscope::trainer::parallel
