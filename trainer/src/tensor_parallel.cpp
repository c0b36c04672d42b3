#include "commscope/trainer/tensor_parallel.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "commscope/collectives/types.hpp"
#include "commscope/profiler/recorder.hpp"
#include "commscope/trainer/data_parallel.hpp"
#include "commscope/trainer/layout.hpp"

namespace commscope::trainer {

namespace {

// Calls f(whole_offset, shard_offset, count) for every contiguous piece of TP rank r's shard.
template <class F>
void for_each_piece(const ParameterLayout& whole, const ParameterLayout& part, int r, F&& f) {
  const std::size_t C = static_cast<std::size_t>(whole.config().channels);
  const std::size_t Cl = C / static_cast<std::size_t>(part.tp()), rank = static_cast<std::size_t>(r);
  for (int ti = 0; ti < kTensorCount; ++ti) {
    const auto t = static_cast<Tensor>(ti);
    const int layers = is_per_layer(t) ? whole.config().layers : 1;
    for (int l = 0; l < layers; ++l) {
      const std::size_t w = whole.offset(t, l), p = part.offset(t, l);
      switch (t) {
        case Tensor::qkvw:  // q, k and v rows of this rank's heads: [3][Cl rows of C]
          for (std::size_t k = 0; k < 3; ++k) f(w + (k * C + rank * Cl) * C, p + k * Cl * C, Cl * C);
          break;
        case Tensor::qkvb:
          for (std::size_t k = 0; k < 3; ++k) f(w + k * C + rank * Cl, p + k * Cl, Cl);
          break;
        case Tensor::fcw:  // rows of this rank's hidden units
          f(w + rank * 4 * Cl * C, p, 4 * Cl * C);
          break;
        case Tensor::fcb:
          f(w + rank * 4 * Cl, p, 4 * Cl);
          break;
        case Tensor::attprojw:  // [C, C] -> the columns of this rank's heads, [C, Cl]
          for (std::size_t o = 0; o < C; ++o) f(w + o * C + rank * Cl, p + o * Cl, Cl);
          break;
        case Tensor::fcprojw:  // [C, 4C] -> [C, 4Cl]
          for (std::size_t o = 0; o < C; ++o) f(w + o * 4 * C + rank * 4 * Cl, p + o * 4 * Cl, 4 * Cl);
          break;
        default:
          f(w, p, whole.size(t));
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
  check_rank(tp, rank);
  const ParameterLayout whole(config), part(config, tp);
  if (full.size() != whole.total())
    throw std::invalid_argument("tp_shard: the buffer holds " + std::to_string(full.size()) + " elements, not " +
                                std::to_string(whole.total()));
  std::vector<T> mine(part.total());
  for_each_piece(whole, part, rank, [&](std::size_t w, std::size_t p, std::size_t n) {
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
    for_each_piece(whole, part, r,
                   [&](std::size_t w, std::size_t p, std::size_t n) { std::copy_n(mine + p, n, full.data() + w); });
  }
  return full;
}

template std::vector<float> tp_shard<float>(const ModelConfig&, int, int, std::span<const float>);
template std::vector<double> tp_shard<double>(const ModelConfig&, int, int, std::span<const double>);
template std::vector<float> tp_unshard<float>(const ModelConfig&, int, std::span<const float>);
template std::vector<double> tp_unshard<double>(const ModelConfig&, int, std::span<const double>);

namespace {

Communicator split(const Communicator& world, int color, int key) {
  MPI_Comm c = MPI_COMM_NULL;
  MPI_Comm_split(world.mpi_comm(), color, key, &c);
  Communicator out(c, world.options());  // a duplicate
  MPI_Comm_free(&c);
  return out;
}

int checked_tp(const Communicator& world, int tp) {
  if (tp < 1 || world.size() % tp != 0)
    throw std::invalid_argument("tensor parallelism over " + std::to_string(tp) + " ranks does not divide the " +
                                std::to_string(world.size()) + " ranks");
  return tp;
}

}  // namespace

ProcessGrid::ProcessGrid(const Communicator& world, int tp_ranks)
    : tp_size(checked_tp(world, tp_ranks)),
      tp_rank(world.rank() % tp_ranks),
      dp_size(world.size() / tp_ranks),
      dp_rank(world.rank() / tp_ranks),
      tp(split(world, world.rank() / tp_ranks, world.rank() % tp_ranks)),
      dp(split(world, world.rank() % tp_ranks, world.rank() / tp_ranks)) {}

template <class T>
std::function<void(T*, std::size_t)> tp_allreduce(Communicator& tp, const std::string& algo) {
  const profiler::NameId name = profiler::name_id("tp.allreduce"), algo_id = profiler::name_id(algo);
  return [&tp, algo, name, algo_id](T* data, std::size_t count) {
    const std::size_t bytes = count * sizeof(T);
    CollectiveActivity activity("allreduce", algo, bytes, "tensor-parallel activations");
    profiler::CommScope c(name, algo_id, static_cast<std::int64_t>(bytes));
    tp.allreduce(data, data, count, std::is_same_v<T, double> ? DataType::f64 : DataType::f32, ReduceOp::sum, algo);
  };
}

template std::function<void(float*, std::size_t)> tp_allreduce<float>(Communicator&, const std::string&);
template std::function<void(double*, std::size_t)> tp_allreduce<double>(Communicator&, const std::string&);

std::vector<float> gather_tp(Communicator& tp, const ModelConfig& config, std::span<const float> mine) {
  if (tp.size() == 1) return {mine.begin(), mine.end()};
  std::vector<float> all(mine.size() * static_cast<std::size_t>(tp.size()));
  tp.allgather(mine.data(), all.data(), mine.size(), DataType::f32, "mpi");
  return tp_unshard<float>(config, tp.size(), all);
}

}  // namespace commscope::trainer
