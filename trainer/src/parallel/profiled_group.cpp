#include "parallel/profiled_group.hpp"

#include <cmath>
#include <utility>

#include "commscope/collectives/types.hpp"

namespace commscope::trainer::parallel {

const GroupOpName& group_op_name(GroupOp op) {
  static constexpr std::array<GroupOpName, kOpCount> kNames = {{
      {"allreduce", "allreduce", "gradients"},
      {"reducescatter", "reducescatter", "gradients"},
      {"allgather", "allgather", "parameters"},
      {"allreduce", "embedding.allreduce", "embedding gradients"},
      {"allreduce", "tp.allreduce", "tensor-parallel activations"},
      {"allreduce", "tp.allreduce_max", "tensor-parallel logit maxima"},
      {"reducescatter", "tp.reducescatter", "sequence-parallel activations"},
      {"allgather", "tp.allgather", "sequence-parallel activations"},
      {"allreduce", "allreduce", "loss"},
      {"allreduce", "allreduce", "gradient norm"},
      {"send", "pp.send", "activations or gradients to a neighbouring stage"},
      {"recv", "pp.recv", "activations from the previous stage"},
      {"recv", "pp.recv", "gradients from the next stage"},
  }};
  return kNames[static_cast<std::size_t>(op)];
}

ProfiledGroup::ProfiledGroup(const Communicator& comm, std::string_view kind, std::string algo,
                             std::string_view profiled_algo)
    : algo_(std::move(algo)),
      algo_id_(profiler::name_id(profiled_algo.empty() ? std::string_view(algo_) : profiled_algo)),
      group_(&profile_group(comm, kind)) {
  for (int i = 0; i < kOpCount; ++i)
    names_[static_cast<std::size_t>(i)] = profiler::name_id(group_op_name(static_cast<GroupOp>(i)).profile);
}

StepSums::StepSums(Communicator& dp, Communicator* tp, Communicator* pp) : dp_(dp, "dp") {
  if (tp != nullptr) tp_ = std::make_unique<Group>(*tp, "tp");
  if (pp != nullptr) pp_ = std::make_unique<Group>(*pp, "pp");
}

double StepSums::sum(const Group& group, GroupOp op, double local) {
  double sum = 0;
  group.profiled.run(op, sizeof(double),
                     [&] { group.comm->allreduce(&local, &sum, 1, DataType::f64, ReduceOp::sum, "mpi"); });
  return sum;
}

float StepSums::mean_loss(double local) const {
  if (pp_) local = sum(*pp_, GroupOp::loss_allreduce, local);
  return static_cast<float>(sum(dp_, GroupOp::loss_allreduce, local) / dp_.comm->size());
}

float StepSums::norm(double squares, bool sharded) const {
  if (sharded) squares = sum(dp_, GroupOp::norm_allreduce, squares);
  return static_cast<float>(std::sqrt(squares));
}

float StepSums::norm(double split, double replicated, bool sharded) const {
  if (sharded) {
    replicated = sum(dp_, GroupOp::norm_allreduce, replicated);
    split = sum(dp_, GroupOp::norm_allreduce, split);
  }
  if (tp_) split = sum(*tp_, GroupOp::norm_allreduce, split);
  double total = split + replicated;
  if (pp_) total = sum(*pp_, GroupOp::norm_allreduce, total);
  return static_cast<float>(std::sqrt(total));
}

}  // namespace commscope::trainer::parallel
