#include "parallel/profiled_group.hpp"

#include <utility>

namespace commscope::trainer::parallel {

const GroupOpName& group_op_name(GroupOp op) {
  static constexpr std::array<GroupOpName, kGroupOpCount> kNames = {{
      {"allreduce", "allreduce", "gradients"},
      {"reducescatter", "reducescatter", "gradients"},
      {"allgather", "allgather", "parameters"},
      {"allreduce", "embedding.allreduce", "embedding gradients"},
      {"allreduce", "tp.allreduce", "tensor-parallel activations"},
      {"allreduce", "tp.allreduce_max", "tensor-parallel logit maxima"},
      {"reducescatter", "tp.reducescatter", "sequence-parallel activations"},
      {"allgather", "tp.allgather", "sequence-parallel activations"},
  }};
  return kNames[static_cast<std::size_t>(op)];
}

ProfiledGroup::ProfiledGroup(const Communicator& comm, std::string_view kind, std::string algo,
                             std::string_view profiled_algo)
    : algo_(std::move(algo)),
      algo_id_(profiler::name_id(profiled_algo.empty() ? std::string_view(algo_) : profiled_algo)),
      group_(&profile_group(comm, kind)) {
  for (int i = 0; i < kGroupOpCount; ++i)
    names_[static_cast<std::size_t>(i)] = profiler::name_id(group_op_name(static_cast<GroupOp>(i)).profile);
}

}  // namespace commscope::trainer::parallel
